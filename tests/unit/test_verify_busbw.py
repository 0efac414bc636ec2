"""Unit tests: reading an all-reduce's bus bandwidth from real output, and the catalog's published figures."""

from pathlib import Path

import pytest

from gpufleet.app import verify
from gpufleet.base.catalog import aws, nccl
from gpufleet.app.verify.busbw import ExpectedBusbw, busbw_at, read_busbw

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nccl"


def test_nccl_tests_table_under_srun_reads_the_out_of_place_column():
    log = (FIXTURES / "all_reduce_perf-2x-p5.48xlarge-slurm.txt").read_text()
    got = read_busbw(log)
    assert got[17179869184] == 487.09  # not the in-place 487.26
    assert got[1073741824] == 436.95 and got[8] == 0.0
    assert busbw_at(log, 2147483648) == (2147483648, 443.72)
    assert busbw_at(log, None) == (17179869184, 487.09)  # no size asked: the largest measured


def test_nccl_tests_table_under_open_mpi_with_footer():
    log = (FIXTURES / "all_reduce_perf-2x-p5.48xlarge-eks.txt").read_text()
    got = read_busbw(log)
    # Header, footer ("Avg bus bandwidth    : 52.9753") and the 0-byte row parse as what they are.
    assert sorted(got) == [0, 67108864, 134217728, 268435456, 536870912, 1073741824, 2147483648]
    assert got[2147483648] == 437.79
    # A figure measured at 16 GiB cannot be judged from a run that stopped at 2 GiB.
    assert busbw_at(log, 17179869184) is None


def test_gpufleets_own_all_reduce_line():
    log = ("host:12:12 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE\n"
           "all_reduce 2147483648 bytes over 16 GPUs: 9.07 ms, algbw 236.7 GB/s, busbw 443.7 GB/s\n")
    assert read_busbw(log) == {2147483648: 443.7}
    assert busbw_at(log, 1073741824) is None


def test_a_log_without_results():
    assert busbw_at("NCCL WARN NET/OFI Only EFA provider is supported\n", None) is None


def test_published_figures_and_the_sizes_they_were_measured_at():
    figures = nccl.busbw_figures()
    assert {t: (f.busbw_gbps, f.message_bytes, f.nodes) for t, f in figures.items()} == {
        "p4de.24xlarge": (78.33, 2147483648, 2),
        "p5.48xlarge": (487.09, 17179869184, 2),
    }
    assert all(f.sources and "awsome-distributed-training" in f.sources[0] for f in figures.values())
    # Every figure is for an instance type the catalog knows, with the GPUs per node the figure was measured with.
    assert all(aws.instance_type(t).gpus == f.gpus_per_node for t, f in figures.items())


@pytest.mark.parametrize("itype", ["p4d.24xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge",
                                   "a3-megagpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g"])
def test_types_without_a_sourced_figure_have_none(itype):
    assert itype not in verify.expected_busbw()


def test_verify_compares_at_the_figures_size():
    assert verify.expected_busbw()["p5.48xlarge"] == ExpectedBusbw(487.09, 17179869184)
