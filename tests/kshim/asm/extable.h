/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in (tests/kshim/README): x86's relative entry. */
#ifndef KSHIM_ASM_EXTABLE_H
#define KSHIM_ASM_EXTABLE_H
struct exception_table_entry {
	int insn, fixup, data;
};
#endif
