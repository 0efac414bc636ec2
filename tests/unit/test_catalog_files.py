"""Unit tests (layer 1): the catalog's files read the same with libyaml's parser as with PyYAML's own."""

from pathlib import Path

import pytest
import yaml

from gpufleet.base.catalog import _files

FILES = sorted(p.name for p in Path(_files.__file__).parent.glob("*.yaml"))


def same(a, b) -> bool:
    """Equal values of the same types, keys in the same order (True == 1 would hide a bool read as an int)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def test_every_catalog_file_is_checked():
    assert "gpus.yaml" in FILES and "aws_instances.yaml" in FILES


@pytest.mark.parametrize("name", FILES)
def test_the_catalog_parser_reads_what_pyyaml_reads(name):
    text = (Path(_files.__file__).parent / name).read_text(encoding="utf-8")
    assert same(yaml.load(text, Loader=_files.LOADER), yaml.safe_load(text))
