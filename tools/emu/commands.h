// commands.h - the options of mltcp-emu's commands, as the command line
// (cli.cpp) fills them, and the commands that run them: send (send.cpp),
// recv (recv.cpp) and ring (ring_worker.cpp).  Each returns the exit code.
#pragma once

#include <cstdint>
#include <string>

#include "emu_util.h"

namespace mltcp_emu {

struct SendOptions {
	std::string dst;
	std::string profile_file;
	std::string profile;
	std::string job;
	std::string cc;
	uint64_t iterations = 20;
	uint64_t start_at_us = 0;	// absolute CLOCK_REALTIME; 0 = now
	uint64_t offset_us = 0;
	uint64_t t0_us = 0;		// CSV time origin; 0 = start time
	uint64_t bulk_seconds = 10;
	uint64_t warmup = 3;
	bool hints = false;
	std::string csv;
	std::string json;
};

struct RecvOptions {
	uint64_t port = 0;	// 0: the kernel picks one (see --port-file)
	std::string bind = "0.0.0.0";
	std::string port_file;
	std::string log_dir;
	uint64_t t0_us = 0;
	uint64_t bin_us = kDefaultBinUs;
	uint64_t duration_s = 0;	// 0: until SIGTERM/SIGINT
};

struct RingOptions {
	uint64_t rank = 0;
	bool rank_given = false;
	std::string peers;			// IP:PORT of every rank, in ring order
	std::string bind;			// empty: this rank's address in peers
	uint64_t connect_timeout_s = 10;	// ranks may start in any order
	uint64_t io_timeout_s = 60;		// a step stuck this long is a failure
	std::string rx_log;
	uint64_t bin_us = kDefaultBinUs;
};

int cmd_send(const SendOptions &o);
int cmd_recv(const RecvOptions &o);
// ring takes send's job options too (profile, iterations, outputs, ...).
int cmd_ring(const SendOptions &o, const RingOptions &ro);

}  // namespace mltcp_emu
