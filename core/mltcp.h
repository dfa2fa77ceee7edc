/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp.h - the MLTCP policy core: include this one header.
 *
 *   mltcp_params.h  scales, defaults, ranges, validation
 *   mltcp_iter.h    iteration tracking and the gain F
 *   mltcp_job.h     one bytes ratio for the connections of a job
 *   mltcp_window.h  what F scales in Reno and CUBIC, the per-ack cache
 *   mltcp_reno.h    the Reno step and tcp_cong.c's window arithmetic
 *   mltcp_cubic.h   CUBIC and HyStart (tcp_cubic.c) with F
 *   mltcp_dcqcn.h   DCQCN reaction/notification point with F
 *   mltcp_dcqcn_flow.h  one DCQCN flow: tracker + reaction point, in order
 */
#ifndef MLTCP_H
#define MLTCP_H

#include "mltcp_params.h"
#include "mltcp_iter.h"
#include "mltcp_job.h"
#include "mltcp_window.h"
#include "mltcp_reno.h"
#include "mltcp_cubic.h"
#include "mltcp_dcqcn.h"
#include "mltcp_dcqcn_flow.h"

#endif /* MLTCP_H */
