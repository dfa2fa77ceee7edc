// device.h - one NIC port under MLTCP control: its iteration tracker, the
// firmware-friendly write path (quantised gain, at most N parameter writes
// per sliding second), the counters the status shows, and restoring the
// originals.  A device that fails (file gone, write refused) restores what
// it can and stops; the others carry on.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "device_files.h"
#include "mltcp.hpp"
#include "state_file.h"

namespace dcqcnd {

void Log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void LogError(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// Writes every saved value back; false with *err listing what failed.
bool RestoreSaved(const SavedState &s, std::string *err);

// At most `max` events in any window of one second (not a token bucket,
// whose burst would allow up to 2 x max across a window boundary).
class WriteLimiter {
 public:
	explicit WriteLimiter(uint32_t max) : max_(max) {}
	bool Allows(uint64_t now_us, uint32_t n)
	{
		while (!times_.empty() && now_us - times_.front() >= 1000000)
			times_.pop_front();
		return times_.size() + n <= max_;
	}
	void Record(uint64_t now_us) { times_.push_back(now_us); }

 private:
	uint32_t max_;
	std::deque<uint64_t> times_;
};

struct DeviceConfig {
	Layout layout;
	mltcp::Params params;
	uint32_t gain_step = MLTCP_GAIN_ONE / 16;	// GAIN units
	uint32_t max_writes_per_sec = 50;
	uint64_t counter_unit = 4;	// port_xmit_data counts 4-octet words
	uint32_t srtt_us = 100;
	uint32_t seed = 0;	// the first iteration's seed (mltcp_iter_seed): random in the daemon
	bool verbose = false;
};

enum class StartError { kNone, kFiles, kState };

// kRefused: Start() failed, nothing was written (and nothing is restored).
enum class DeviceState { kIdle, kRefused, kActive, kFailed, kStopped };

struct DeviceCounters {
	uint64_t param_writes = 0;	// successful writes (firmware commands)
	uint64_t param_write_failures = 0;
	uint64_t gain_updates = 0;	// quantised gain changes applied
	uint64_t gain_updates_deferred = 0;	// held back by the write limit
	uint64_t restores = 0;	// parameters put back to their original
	uint64_t restore_failures = 0;
};

class Device {
 public:
	Device(const DeviceConfig &c, const DeviceSpec &spec, const DevicePaths &paths,
	       const std::string &state_file);
	~Device();

	// Restores a crashed run's values, checks the files, saves the
	// originals.  Not kNone: the device is refused, nothing was changed.
	StartError Start(uint64_t now_us, std::string *err);
	void Refuse(const std::string &why)
	{
		last_error_ = why;
		state_ = DeviceState::kRefused;
	}
	// One poll: progress, gain, at most one (rate-limited) update.
	void Poll(uint64_t now_us);
	// Puts the originals back; keeps the state file if any write fails.
	void Stop(const char *why);

	int hint_fd() const { return hint_fd_; }
	DeviceState state() const { return state_; }
	const DevicePaths &paths() const { return paths_; }
	const DeviceCounters &counters() const { return counters_; }
	const std::string &state_file() const { return state_file_; }
	const std::string &last_error() const { return last_error_; }
	uint32_t applied_gain() const { return applied_gain_; }
	uint64_t ai_value() const { return cur_[0]; }
	uint64_t hai_value() const { return cur_[1]; }
	uint32_t iterations() const { return flow_.state().iterations; }
	uint32_t hinted() const { return flow_.state().hinted; }
	std::string Name() const;

 private:
	static constexpr int kNumWritten = 2;	// the AI and HAI steps

	bool ReadBytes(uint64_t *bytes);
	void ReadHints(uint64_t bytes, uint32_t now);
	void Apply(uint64_t now_us);
	void Fail(const std::string &what, int errnum);
	const CcParam &Param(int i) const;

	DeviceConfig c_;
	DeviceSpec spec_;
	DevicePaths paths_;
	std::string state_file_;
	std::string path_[kNumWritten];
	uint64_t orig_[kNumWritten] = {};
	uint64_t cur_[kNumWritten] = {};
	DeviceState state_ = DeviceState::kIdle;
	DeviceCounters counters_;
	WriteLimiter limiter_;
	mltcp::Flow flow_;
	uint64_t last_bytes_ = 0, hinted_bytes_ = 0;
	bool sending_ = false;
	uint32_t applied_gain_ = MLTCP_GAIN_ONE;
	uint32_t deferred_gain_ = 0;
	int hint_fd_ = -1;
	std::string hint_buf_;
	std::string last_error_;
};

}  // namespace dcqcnd
