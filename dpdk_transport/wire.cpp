// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// wire.cpp - serialisation and validation of the transport header (wire.h).
#include "wire.h"

#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mltcp_dpdk {

namespace {

// Sums the buffer's little-endian 32-bit words into a 64-bit total (no
// carry handling needed below 16 GiB); the vector versions keep 64-bit
// lanes of 32-bit words, the same sum.  n must be a multiple of 4.
uint64_t SumWordsScalar(const uint8_t *p, size_t n, uint64_t sum)
{
	for (; n >= 4; p += 4, n -= 4) {
		uint32_t w;
		memcpy(&w, p, 4);
		sum += w;
	}
	return sum;
}

#if defined(__x86_64__)
uint64_t SumWordsSse2(const uint8_t *p, size_t n, uint64_t sum)
{
	const __m128i z = _mm_setzero_si128();
	__m128i a0 = z, a1 = z, a2 = z, a3 = z;
	for (; n >= 32; p += 32, n -= 32) {
		__m128i x = _mm_loadu_si128((const __m128i *)p);
		__m128i y = _mm_loadu_si128((const __m128i *)(p + 16));
		a0 = _mm_add_epi64(a0, _mm_unpacklo_epi32(x, z));
		a1 = _mm_add_epi64(a1, _mm_unpackhi_epi32(x, z));
		a2 = _mm_add_epi64(a2, _mm_unpacklo_epi32(y, z));
		a3 = _mm_add_epi64(a3, _mm_unpackhi_epi32(y, z));
	}
	__m128i t = _mm_add_epi64(_mm_add_epi64(a0, a1), _mm_add_epi64(a2, a3));
	uint64_t l[2];
	_mm_storeu_si128((__m128i *)l, t);
	return SumWordsScalar(p, n, sum + l[0] + l[1]);
}

__attribute__((target("avx2"))) uint64_t SumWordsAvx2(const uint8_t *p, size_t n, uint64_t sum)
{
	const __m256i z = _mm256_setzero_si256();
	__m256i a0 = z, a1 = z, a2 = z, a3 = z;
	for (; n >= 64; p += 64, n -= 64) {
		__m256i x = _mm256_loadu_si256((const __m256i *)p);
		__m256i y = _mm256_loadu_si256((const __m256i *)(p + 32));
		a0 = _mm256_add_epi64(a0, _mm256_unpacklo_epi32(x, z));
		a1 = _mm256_add_epi64(a1, _mm256_unpackhi_epi32(x, z));
		a2 = _mm256_add_epi64(a2, _mm256_unpacklo_epi32(y, z));
		a3 = _mm256_add_epi64(a3, _mm256_unpackhi_epi32(y, z));
	}
	__m256i t = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
	uint64_t l[4];
	_mm256_storeu_si256((__m256i *)l, t);
	return SumWordsSse2(p, n, sum + l[0] + l[1] + l[2] + l[3]);
}

using SumWordsFn = uint64_t (*)(const uint8_t *, size_t, uint64_t);
uint64_t SumWords(const uint8_t *p, size_t n, uint64_t sum)
{
	static const SumWordsFn fn = [] {
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx2") ? SumWordsAvx2 : SumWordsSse2;
	}();
	return fn(p, n, sum);
}
#else
uint64_t SumWords(const uint8_t *p, size_t n, uint64_t sum) { return SumWordsScalar(p, n, sum); }
#endif

uint16_t Fold(uint64_t sum)
{
	sum = (sum & 0xffffffffULL) + (sum >> 32);
	sum = (sum & 0xffffffffULL) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

// The bytes after the last whole word, and the fold to 16 bits.
uint16_t SumTail(const uint8_t *p, size_t len, uint64_t sum)
{
	if (len >= 2) {
		uint16_t w;
		memcpy(&w, p, 2);
		sum += w;
		p += 2;
		len -= 2;
	}
	if (len)
		sum += *p;
	return Fold(sum);
}

}  // namespace

uint16_t OnesComplementSumScalar(const void *data, size_t len, uint32_t initial)
{
	const uint8_t *p = static_cast<const uint8_t *>(data);
	const size_t words = len & ~(size_t)3;
	return SumTail(p + words, len - words, SumWordsScalar(p, words, initial));
}

uint16_t OnesComplementSum(const void *data, size_t len, uint32_t initial)
{
	const uint8_t *p = static_cast<const uint8_t *>(data);
	const size_t words = len & ~(size_t)3;
	return SumTail(p + words, len - words, SumWords(p, words, initial));
}

const char *ParseErrorName(ParseError e)
{
	switch (e) {
	case ParseError::kOk: return "ok";
	case ParseError::kTooShort: return "truncated packet";
	case ParseError::kBadMagic: return "not an MLTCP-DPDK packet";
	case ParseError::kBadChecksum: return "bad checksum";
	}
	return "unknown parse error";
}

// Checksum of header (with a zero checksum field) plus payload; never 0,
// because 0 on the wire means "not computed".
static uint16_t PacketChecksum(const uint8_t *hdr, const uint8_t *payload, size_t plen)
{
	WireHeader h;
	memcpy(&h, hdr, sizeof(h));
	h.checksum = 0;
	uint16_t s = OnesComplementSum(&h, sizeof(h));
	s = OnesComplementSum(payload, plen, s);
	uint16_t c = (uint16_t)~s;
	return c ? c : 0xffff;
}

size_t Serialize(const WireHeader &h, const uint8_t *payload, uint8_t *buf,
		 bool checksum)
{
	WireHeader out = h;
	out.magic = kWireMagic;
	out.version = kWireVersion;
	out.checksum = 0;
	memcpy(buf, &out, sizeof(out));
	if (out.payload_len)
		memcpy(buf + sizeof(out), payload, out.payload_len);
	if (checksum) {
		out.checksum = PacketChecksum(buf, buf + sizeof(out), out.payload_len);
		memcpy(buf + offsetof(WireHeader, checksum), &out.checksum,
		       sizeof(out.checksum));
	}
	return sizeof(out) + out.payload_len;
}

ParseError Parse(const uint8_t *buf, size_t len, WireHeader *h, const uint8_t **payload)
{
	if (len < sizeof(WireHeader))
		return ParseError::kTooShort;
	memcpy(h, buf, sizeof(*h));
	if (h->magic != kWireMagic || h->version != kWireVersion)
		return ParseError::kBadMagic;
	if (len < sizeof(WireHeader) + h->payload_len)
		return ParseError::kTooShort;
	if (h->checksum &&
	    PacketChecksum(buf, buf + sizeof(WireHeader), h->payload_len) != h->checksum)
		return ParseError::kBadChecksum;
	*payload = buf + sizeof(WireHeader);
	return ParseError::kOk;
}

}  // namespace mltcp_dpdk
