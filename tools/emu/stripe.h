// stripe.h - how a job's messages are spread over its connections
// (mltcp-emu send).  By default each message is split into nearly equal
// shares, one per connection.  With stripe_chunk (NCCL-style striping) a
// message is cut into chunks of stripe_chunk bytes, the last one shorter,
// and chunk j goes to connection j mod conns, as NCCL's socket transport
// deals a request's chunks round robin over its NCCL_NSOCKS_PERTHREAD x
// NCCL_SOCKET_NTHREADS sockets.  Unlike NCCL, whose chunk size is
// max(64 KiB, request / sockets), the chunk is fixed by the profile, so a
// message smaller than conns chunks leaves connections idle and the last
// chunk makes the shares uneven, which is what the profile is for.
#pragma once

#include <cstdint>

#include "profile.h"

namespace mltcp_emu {

// Bytes connection c (0-based) of `conns` carries of a `total`-byte message
// striped in `chunk`-byte chunks round robin.
uint64_t stripe_share(uint64_t total, uint32_t conns, uint64_t chunk, uint32_t c);

// Bytes connection c carries of one message (bucket) of p's job.
uint64_t message_share(const mltcp_workload::Profile &p, uint64_t message, uint32_t c);

// Bytes connection c carries in an iteration of `bytes`: its share of each bucket.
uint64_t iteration_share(const mltcp_workload::Profile &p, uint64_t bytes, uint32_t c);

}  // namespace mltcp_emu
