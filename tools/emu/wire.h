// wire.h - the emulator's on-the-wire protocol between a sending job and the
// receiver.  Kept minimal so that almost every byte on the wire is payload:
//
//   sender -> receiver, once per connection:  struct emu_hello
//   per message (one bucket on one connection): struct emu_msg_hdr, then
//     hdr.bytes of payload; if EMU_MSG_CONFIRM is set the receiver answers
//     with a u64 = payload bytes received on this connection since its last
//     confirmation (the all-reduce "done" signal that ends the phase);
//   a message with EMU_MSG_BULK streams payload until the sender closes.
//
// Ring mode (mltcp-emu ring), one connection from each rank to the next:
//   connecting rank -> accepting rank: struct emu_ring_hello; the accepting
//     rank answers with its own emu_ring_hello (both check job, ring size and
//     that the other is the neighbour they expect);
//   per all-reduce step: struct emu_ring_step_hdr, then hdr.bytes of payload
//     (a pattern both ends derive, ring.h, so every byte is checked).
//
// All integers are little-endian host order (both ends run on this host).
#pragma once

#include <cstdint>

namespace mltcp_emu {

constexpr uint32_t kHelloMagic = 0x4d4c4531;	// "MLE1"
constexpr uint32_t kMsgMagic = 0x4d4c4d31;	// "MLM1"
constexpr uint32_t kRingHelloMagic = 0x4d4c5231;	// "MLR1"
constexpr uint32_t kRingStepMagic = 0x4d4c5331;	// "MLS1"
constexpr size_t kJobNameMax = 24;		// including the terminating NUL

enum emu_msg_flags : uint32_t {
	EMU_MSG_CONFIRM = 1u << 0,	// last message of this iteration
	EMU_MSG_BULK = 1u << 1,		// payload until EOF, no confirmation
};

struct emu_hello {
	uint32_t magic;
	uint32_t conn_index;		// 0..conns-1 within the job
	char job[kJobNameMax];
};

struct emu_msg_hdr {
	uint64_t bytes;
	uint32_t flags;
	uint32_t magic;
};

struct emu_ring_hello {
	uint32_t magic;
	uint32_t rank;			// the sender's rank
	uint32_t ranks;			// K, ring size
	uint32_t reserved;
	char job[kJobNameMax];
};

struct emu_ring_step_hdr {
	uint64_t iteration;
	uint64_t bytes;			// payload that follows
	uint32_t bucket;
	uint32_t step;			// 0 .. 2(K-1)-1
	uint32_t chunk;			// chunk index of the buffer (ring.h)
	uint32_t magic;
};

static_assert(sizeof(emu_hello) == 32, "hello is 32 bytes on the wire");
static_assert(sizeof(emu_msg_hdr) == 16, "message header is 16 bytes on the wire");
static_assert(sizeof(emu_ring_hello) == 40, "ring hello is 40 bytes on the wire");
static_assert(sizeof(emu_ring_step_hdr) == 32, "ring step header is 32 bytes on the wire");

}  // namespace mltcp_emu
