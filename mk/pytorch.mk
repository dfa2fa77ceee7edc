# PyTorch DDP over the real kernel (issue 18): Debian's python3-torch (Gloo),
# the example job and launcher (examples/pytorch/), job-level hints from DDP.
#
#   make check-pytorch   a tiny 2-rank DDP job through the launcher with MLTCP
#                        and hints, a failing and a hanging rank, a second
#                        launcher, torch missing, bad and refused hints, and
#                        one tiny repetition of bench-pytorch (~60 s; root)
#   make bench-pytorch   two identical DDP jobs (and small buckets, and with
#                        hints) x cubic reno mltcp mltcp_cubic x PT_REPS, on the
#                        testbed (10-20 min); PT_REPS, PT_ITERATIONS, PT_MIXES,
#                        PT_CCS select the runs; MLTCP_PARAMS="k=v ..." sets
#                        runtime parameters, as for bench-interleave

# python3-torch is in debian/control's Build-Depends (<!nocheck>).
CHECK_TARGETS += check-pytorch

PT_REPS       ?= 5
PT_ITERATIONS ?= 18
PT_MIXES      ?= two_identical small_buckets two_identical_hint
PT_CCS        ?= cubic reno mltcp mltcp_cubic
MLTCP_PARAMS  ?=
BENCH_PT_OUT  ?= $(BUILD)/bench-pytorch/$(shell date -u +%Y%m%d-%H%M%S)

.PHONY: check-pytorch bench-pytorch

check-pytorch: cmake-build
	BUILD=$(BUILD) MLTCPCTL=$(BUILD)/cmake/tools/mltcpctl/mltcpctl \
	    MLTCP_LIBRARY=$(BUILD)/cmake/bpf/libmltcp.so.0 $(ROOT)/tests/pytorch/run_tests.sh

bench-pytorch: cmake-build
	MLTCP_LIBRARY=$(BUILD)/cmake/bpf/libmltcp.so.0 MLTCP_METRICS=$(BUILD)/cmake/workload/mltcp-metrics \
	    /usr/bin/python3 \
	    $(ROOT)/examples/pytorch/bench.py --out $(BENCH_PT_OUT) --reps $(PT_REPS) \
	    --iterations $(PT_ITERATIONS) --mixes "$(PT_MIXES)" --ccs "$(PT_CCS)" \
	    --mltcpctl $(BUILD)/cmake/tools/mltcpctl/mltcpctl \
	    $(foreach p,$(MLTCP_PARAMS),--param $(p))
