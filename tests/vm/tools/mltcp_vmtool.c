// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * mltcp_vmtool.c - traffic and inspection helper for the VM tests (busybox
 * has no python).  Built static so the initramfs needs no libraries.
 *
 *   mltcp_vmtool server --port P [--count N]
 *       accept N connections one after another, read each to EOF, print
 *       "SERVER bytes=<n> fnv=<hex>" per connection.
 *   mltcp_vmtool client --host A --port P --bytes B [--cc NAME]
 *       [--iters N --gap-ms G] [--trace FILE] [--hold-ms H]
 *       send N iterations of B bytes (a deterministic pattern), waiting for
 *       all bytes to be acked and G ms between iterations; with --trace,
 *       sample TCP_INFO (cwnd, ssthresh) during the transfer; with
 *       --hold-ms, keep the connection open that long once all data is acked
 *       (prints "CLIENT-HOLDING" first); print one
 *       "CLIENT ..." line with bytes, checksum, throughput, the congestion
 *       control in use (getsockopt TCP_CONGESTION), the Reno/CUBIC backoff
 *       summary, and the module's per-flow state (getsockopt TCP_CC_INFO).
 *   mltcp_vmtool getcc
 *       print the congestion control a new TCP socket gets.
 * Exit status: 0 ok, 1 runtime failure, 2 usage error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <time.h>
#include <unistd.h>

#include "tcp_mltcp_info.h"

#define CHUNK_BYTES	16384
#define FNV_OFFSET	0xcbf29ce484222325ULL
#define FNV_PRIME	0x100000001b3ULL
#define MAX_BACKOFFS	4096

static void die(const char *what)
{
	fprintf(stderr, "mltcp_vmtool: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage_error(const char *msg)
{
	fprintf(stderr, "mltcp_vmtool: %s (see the header of mltcp_vmtool.c)\n", msg);
	exit(2);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
	while (n--) {
		h ^= *p++;
		h *= FNV_PRIME;
	}
	return h;
}

/* Byte i of the stream: cheap, deterministic, not periodic over 256. */
static unsigned char pattern(uint64_t i)
{
	return (unsigned char)((i * 2654435761ULL) >> 13);
}

static int run_server(int port, int count)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	static unsigned char buf[1 << 16];
	int one = 1, ls;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0)
		die("socket");
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 16))
		die("bind/listen");
	printf("SERVER listening port=%d\n", port);
	fflush(stdout);
	for (int c = 0; c < count; c++) {
		int fd = accept(ls, NULL, NULL);
		uint64_t total = 0, h = FNV_OFFSET;
		ssize_t n;

		if (fd < 0)
			die("accept");
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			h = fnv(h, buf, n);
			total += n;
		}
		if (n < 0)
			die("read");
		printf("SERVER bytes=%llu fnv=%016llx\n", (unsigned long long)total,
		       (unsigned long long)h);
		fflush(stdout);
		close(fd);
	}
	close(ls);
	return 0;
}

struct backoff_stats {
	unsigned int n;
	double ratio[MAX_BACKOFFS];
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Samples TCP_INFO every SAMPLE_US while the transfer runs, on its own thread
 * so that blocked writes do not hide loss recovery.  Entering Recovery or
 * Loss is one multiplicative decrease: ssthresh over the peak cwnd since the
 * previous one is the backoff factor (Reno 1/2, CUBIC 717/1024).  The first
 * one ends slow start, whose peak is inflated, and is not counted.
 */
#define SAMPLE_US	1000

struct sampler {
	int fd, stop;
	double t0, cwnd_sum;
	unsigned long samples;
	FILE *trace;
	struct backoff_stats bo;
	unsigned int reno_votes, cubic_votes, other_votes;
};

/*
 * Which multiplicative decrease produced this ssthresh from the cwnd of the
 * last sample before the loss: tcp_reno_ssthresh() = max(cwnd / 2, 2) or
 * CUBIC's max(cwnd * 717 / 1024, 2).  Exact integer formulas, so small
 * windows are classified correctly; windows where both agree do not vote.
 */
#define CUBIC_BETA		717
#define CUBIC_BETA_SCALE	1024

static void classify_backoff(struct sampler *s, unsigned int cwnd,
			     unsigned int ssthresh)
{
	unsigned int reno = cwnd / 2 > 2 ? cwnd / 2 : 2;
	unsigned int cubic = cwnd * CUBIC_BETA / CUBIC_BETA_SCALE;

	if (cubic < 2)
		cubic = 2;
	if (!cwnd || reno == cubic)
		return;
	if (ssthresh == reno)
		s->reno_votes++;
	else if (ssthresh == cubic)
		s->cubic_votes++;
	else
		s->other_votes++;
}

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	unsigned int max_cwnd = 0, last_ca_state = TCP_CA_Open, last_cwnd = 0;
	int seen_loss = 0;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		struct tcp_info ti;
		socklen_t len = sizeof(ti);

		if (getsockopt(s->fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
			die("getsockopt(TCP_INFO)");
		fprintf(s->trace, "%.1f %u %u %u\n", now_ms() - s->t0,
			ti.tcpi_snd_cwnd, ti.tcpi_snd_ssthresh, ti.tcpi_ca_state);
		if (ti.tcpi_ca_state >= TCP_CA_Recovery &&
		    last_ca_state < TCP_CA_Recovery) {
			if (seen_loss && max_cwnd && s->bo.n < MAX_BACKOFFS)
				s->bo.ratio[s->bo.n++] =
					(double)ti.tcpi_snd_ssthresh / max_cwnd;
			classify_backoff(s, last_cwnd, ti.tcpi_snd_ssthresh);
			seen_loss = 1;
			max_cwnd = 0;
		}
		last_ca_state = ti.tcpi_ca_state;
		last_cwnd = ti.tcpi_snd_cwnd;
		if (ti.tcpi_snd_cwnd > max_cwnd)
			max_cwnd = ti.tcpi_snd_cwnd;
		s->cwnd_sum += ti.tcpi_snd_cwnd;
		s->samples++;
		usleep(SAMPLE_US);
	}
	return NULL;
}

static int run_client(const char *host, int port, uint64_t bytes, const char *cc,
		      int iters, int gap_ms, const char *trace_path, int hold_ms)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	static unsigned char buf[CHUNK_BYTES];
	uint64_t sent = 0, h = FNV_OFFSET;
	static struct sampler smp;
	pthread_t sampler_thread;
	double t0, t_end;
	char used_cc[32] = "";
	socklen_t len;
	FILE *trace = NULL;
	int fd;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		usage_error("--host must be an IPv4 address");
	if (trace_path && !(trace = fopen(trace_path, "w")))
		die("open --trace file");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	if (cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc))) {
		fprintf(stderr, "mltcp_vmtool: setsockopt(TCP_CONGESTION, %s): %s\n",
			cc, strerror(errno));
		return 1;
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	t0 = now_ms();
	if (trace) {
		smp.fd = fd;
		smp.t0 = t0;
		smp.trace = trace;
		if (pthread_create(&sampler_thread, NULL, sampler_main, &smp))
			die("pthread_create");
	}
	for (int it = 0; it < iters; it++) {
		uint64_t end = sent + bytes;

		while (sent < end) {
			size_t n = end - sent < CHUNK_BYTES ? end - sent : CHUNK_BYTES;
			ssize_t w;

			for (size_t i = 0; i < n; i++)
				buf[i] = pattern(sent + i);
			w = write(fd, buf, n);
			if (w < 0)
				die("write");
			h = fnv(h, buf, w);
			sent += w;
		}
		if (it + 1 < iters) {
			/* Compute phase: wait for every byte to be acked, then idle. */
			int outq;

			do {
				if (ioctl(fd, SIOCOUTQ, &outq))
					die("ioctl(SIOCOUTQ)");
				if (outq)
					usleep(200);
			} while (outq);
			usleep(gap_ms * 1000);
		}
	}
	if (hold_ms > 0) {
		/* Keep the connection established (all data acked) so that its
		 * state can be inspected from outside, e.g. debugfs or rmmod. */
		int outq;

		do {
			if (ioctl(fd, SIOCOUTQ, &outq))
				die("ioctl(SIOCOUTQ)");
			if (outq)
				usleep(200);
		} while (outq);
		printf("CLIENT-HOLDING ms=%d\n", hold_ms);
		fflush(stdout);
		usleep(hold_ms * 1000);
	}
	if (shutdown(fd, SHUT_WR))
		die("shutdown");
	/* The server closes after reading everything: all bytes delivered. */
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	t_end = now_ms();

	len = sizeof(used_cc);
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, used_cc, &len))
		die("getsockopt(TCP_CONGESTION)");
	used_cc[sizeof(used_cc) - 1] = 0;

	printf("CLIENT bytes=%llu fnv=%016llx ms=%.0f mbps=%.2f cc=%s",
	       (unsigned long long)sent, (unsigned long long)h, t_end - t0,
	       sent * 8.0 / ((t_end - t0) * 1e3), used_cc);
	if (trace) {
		struct backoff_stats *bo = &smp.bo;
		double median = 0;

		__atomic_store_n(&smp.stop, 1, __ATOMIC_RELEASE);
		pthread_join(sampler_thread, NULL);
		if (bo->n) {
			qsort(bo->ratio, bo->n, sizeof(bo->ratio[0]), cmp_double);
			median = bo->ratio[bo->n / 2];
		}
		printf(" backoffs=%u backoff_median=%.3f backoff_reno=%u backoff_cubic=%u"
		       " backoff_other=%u cwnd_mean=%.1f",
		       bo->n, median, smp.reno_votes, smp.cubic_votes, smp.other_votes,
		       smp.samples ? smp.cwnd_sum / smp.samples : 0);
		fclose(trace);
	}
	if (!strncmp(used_cc, "mltcp", 5)) {
		struct tcp_mltcp_info mi;

		memset(&mi, 0, sizeof(mi));
		len = sizeof(mi);
		if (getsockopt(fd, IPPROTO_TCP, TCP_CC_INFO, &mi, &len))
			die("getsockopt(TCP_CC_INFO)");
		if (len != sizeof(mi)) {
			fprintf(stderr, "mltcp_vmtool: TCP_CC_INFO returned %u bytes, want %zu\n",
				len, sizeof(mi));
			return 1;
		}
		printf(" iterations=%u iter_bytes=%u bytes_per_iter=%llu gain=%u ratio=%u",
		       mi.iterations, mi.iter_bytes,
		       (unsigned long long)mi.bytes_per_iter_hi << 32 | mi.bytes_per_iter_lo,
		       mi.gain, mi.ratio);
	}
	printf("\n");
	fflush(stdout);
	close(fd);
	return 0;
}

static int run_getcc(void)
{
	char name[32] = "";
	socklen_t len = sizeof(name);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len))
		die("getsockopt(TCP_CONGESTION)");
	name[sizeof(name) - 1] = 0;
	printf("%s\n", name);
	return 0;
}

int main(int argc, char **argv)
{
	const char *host = NULL, *cc = NULL, *trace = NULL;
	int port = 0, count = 1, iters = 1, gap_ms = 0, hold_ms = 0;
	uint64_t bytes = 0;

	if (argc < 2)
		usage_error("missing command: server, client or getcc");
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage_error("option without value");
		if (!strcmp(o, "--port"))
			port = atoi(v);
		else if (!strcmp(o, "--count"))
			count = atoi(v);
		else if (!strcmp(o, "--host"))
			host = v;
		else if (!strcmp(o, "--bytes"))
			bytes = strtoull(v, NULL, 0);
		else if (!strcmp(o, "--cc"))
			cc = v;
		else if (!strcmp(o, "--iters"))
			iters = atoi(v);
		else if (!strcmp(o, "--gap-ms"))
			gap_ms = atoi(v);
		else if (!strcmp(o, "--trace"))
			trace = v;
		else if (!strcmp(o, "--hold-ms"))
			hold_ms = atoi(v);
		else
			usage_error("unknown option");
		i++;
	}
	if (!strcmp(argv[1], "server")) {
		if (port <= 0 || count <= 0)
			usage_error("server needs --port P (and --count N > 0)");
		return run_server(port, count);
	}
	if (!strcmp(argv[1], "client")) {
		if (!host || port <= 0 || !bytes || iters <= 0)
			usage_error("client needs --host, --port, --bytes (and --iters > 0)");
		return run_client(host, port, bytes, cc, iters, gap_ms, trace, hold_ms);
	}
	if (!strcmp(argv[1], "getcc"))
		return run_getcc();
	usage_error("unknown command");
	return 2;
}
