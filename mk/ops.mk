# Operations (issue 19): what an operator installs, runs and watches.
#
#   make check-ops-concurrency  state-changing mltcpctl commands run at once
#                               keep each other's work (root; host lock; ~5 s)

CHECK_TARGETS += check-ops-concurrency

OPS_CTL := $(BUILD)/cmake/tools/mltcpctl/mltcpctl

.PHONY: check-ops-concurrency

check-ops-concurrency: cmake-build
	BUILD=$(BUILD) MLTCPCTL=$(OPS_CTL) $(ROOT)/tests/bpf/concurrency_test.sh
