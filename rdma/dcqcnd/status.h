// status.h - the daemon's status: per device state, gain, values written
// and counters, as a JSON file rewritten atomically (for operators and for a
// metrics exporter; the keys are documented in docs/rdma.md) and as one
// log line per device.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "device.h"

namespace dcqcnd {

bool WriteStatus(const std::string &path, const std::vector<std::unique_ptr<Device>> &devs,
		 uint64_t uptime_us, uint32_t max_writes_per_sec, std::string *err);
void LogStatus(const std::vector<std::unique_ptr<Device>> &devs);

}  // namespace dcqcnd
