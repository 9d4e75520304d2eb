/* SPDX-License-Identifier: GPL-2.0 */
/* Where arena_log_xlate.bpf.c's refused access is (checked there at build time). */
#define LOG_XLATE_FAIL_LINE	37
