# The workload library (workload/: job profiles, the per-iteration record and
# its CSV, the run metrics) and mltcp-metrics.
#
#   make check-workload   unit tests, mltcp-metrics on recorded CSVs and bad
#                         input, interleave.py's analysis through it (ctest
#                         label workload; ~1 s)

CHECK_TARGETS += check-workload

.PHONY: check-workload

check-workload: cmake-build
	cd $(BUILD)/cmake && ctest --output-on-failure -L workload
