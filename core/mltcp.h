/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp.h - the MLTCP policy core: include this one header.
 *
 *   mltcp_params.h  scales, defaults, ranges, validation
 *   mltcp_iter.h    iteration tracking and the gain F
 *   mltcp_window.h  what F scales in Reno and CUBIC
 *   mltcp_dcqcn.h   DCQCN reaction/notification point with F
 */
#ifndef MLTCP_H
#define MLTCP_H

#include "mltcp_params.h"
#include "mltcp_iter.h"
#include "mltcp_window.h"
#include "mltcp_dcqcn.h"

#endif /* MLTCP_H */
