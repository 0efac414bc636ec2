"""Container image settings of the whole stack (`gpufleet:images`)."""

from gpufleet.base.spec.base import Model


class ImagesSpec(Model):
    """How the images of the charts gpufleet configures are referenced."""

    pin_digests: bool = False
    """Write every image gpufleet sets in chart values as `<repository>:<tag>@sha256:<digest>`, with the digests the
    catalog records (gpufleet/base/catalog/images.yaml, each with its source), so a re-pushed tag cannot change what
    runs. An image without a recorded digest keeps its tag and is named in a plan warning. Default: off, images by tag
    as each chart's defaults name them."""
