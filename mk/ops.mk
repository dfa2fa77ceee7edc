# Operations (issue 19): what an operator installs, runs and watches.
#
#   make check-ops-concurrency  state-changing mltcpctl commands run at once
#                               keep each other's work (root; host lock; ~5 s)
#   make check-ops-exporter     mltcpctl exporter scraped by a real Prometheus
#                               during MLTCP traffic (root; host lock; ~20 s)
#   make check-ops-service      mltcp.service's Exec lines from the build tree,
#                               mltcp.conf good and bad (root; host lock; ~5 s)

DEB_PACKAGES  += libcpp-httplib-dev prometheus curl
CHECK_TARGETS += check-ops-concurrency check-ops-exporter check-ops-service

OPS_CTL := $(BUILD)/cmake/tools/mltcpctl/mltcpctl

.PHONY: check-ops-concurrency check-ops-exporter check-ops-service

check-ops-concurrency: cmake-build
	BUILD=$(BUILD) MLTCPCTL=$(OPS_CTL) $(ROOT)/tests/bpf/concurrency_test.sh

check-ops-exporter: cmake-build
	BUILD=$(BUILD) MLTCPCTL=$(OPS_CTL) $(ROOT)/tests/bpf/exporter_test.sh

check-ops-service: cmake-build
	BUILD=$(BUILD) MLTCPCTL=$(OPS_CTL) $(ROOT)/tests/bpf/service_test.sh
