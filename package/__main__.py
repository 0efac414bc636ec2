"""Entry point of the gpufleet component package (PulumiPlugin.yaml): serve GpuCluster's provider."""

from gpufleet.app.package import main

if __name__ == "__main__":
    main()
