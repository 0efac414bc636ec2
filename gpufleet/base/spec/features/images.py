"""Container image settings of the whole stack (`gpufleet:images`)."""

from gpufleet.base.spec.base import Model


class ImagesSpec(Model):
    """How the images of the charts gpufleet configures are referenced."""

    pin_digests: bool = False
    """Write every image gpufleet sets in chart values as `<repository>:<tag>@sha256:<digest>`, with the digests the
    catalog records (gpufleet/base/catalog/images.yaml, each with its source), so a re-pushed tag cannot change what
    runs. A stack that runs an image without a recorded digest is refused (exit 2, the image named). Default: off,
    images by tag as each chart's defaults name them."""
