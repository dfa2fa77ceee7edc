// sockets.h - the socket helpers of mltcp-emu: non-blocking reads and writes
// with timeouts, TCP_CONGESTION with a helpful error, IPv4:PORT parsing and
// connecting to a receiver that may still be starting.  Failures that end
// the run exit through fatal() with kExitNet / kExitCc / kExitUsage.
#pragma once

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace mltcp_emu {

void set_nonblocking(int fd);

// Waits for `ev` on fd; false on timeout.
bool wait_fd(int fd, short ev, int timeout_ms);

enum class ReadResult { kOk, kClosed, kTimeout };

// Milliseconds from now until deadline_us (0 when it has passed).
int ms_until(uint64_t deadline_us);

// Reads exactly n bytes from a non-blocking fd.  kTimeout when the data
// stops for idle_ms or the deadline passes, kClosed on EOF or an error.
ReadResult read_exact(int fd, void *buf, size_t n, uint64_t deadline_us, int idle_ms);

// Reads exactly n bytes; false on EOF before n; a peer silent for
// kIoTimeoutMs is fatal.
bool read_full(int fd, void *buf, size_t n);

// Writes all n bytes; false when the connection fails.
bool write_full(int fd, const void *buf, size_t n);

// Sets TCP_CONGESTION; on failure names the ones the kernel has.
void set_congestion(int fd, const std::string &cc);

// Fails with exit 3 before any connection if the congestion control is
// missing (no-op for an empty name: the system default).
void check_congestion(const std::string &cc);

// `what` names the option in error messages ("--dst", "--peers entry").
sockaddr_in parse_endpoint(const std::string &s, const std::string &what);

// Connects (retrying refusals for kConnectTimeoutMs) and returns a
// non-blocking socket with TCP_CONGESTION `cc` (empty: system default).
int connect_to(const sockaddr_in &dst, const std::string &cc);

}  // namespace mltcp_emu
