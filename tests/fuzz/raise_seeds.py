#!/usr/bin/env python3
"""raise_seeds.py OUT_DIR: lower_fuzz seeds for the raise's block analysis (rewrite/raise.c,
OPTIMISATIONS, ENTRY POINTS).  Raw-raise inputs (env flag bit 3: the input itself is
raised too) with hand-written placeholder forms, so the fuzzer starts from programs where
a register write or an entry point sits right before a form: each 32-bit ALU op, byte
swaps, loads of each size and mode, 64-bit copies, calls, and each jump kind landing
between a zero-extension and a form.  Lowered programs rarely have these shapes (the
lowering keeps arena pointers 32-bit), raw inputs can."""
import os, struct, sys

ARENA_FD, COMP_FD = 7, 9
FLAGS = 2 | 8  # sleepable, raise the raw input too
K1_MAGIC, K2_MAGIC = 0xBA000000, 0xBB000000
PH_LOAD, PH_STX = 1, 2
DW = 0x18


def env():
    return bytes([FLAGS, ARENA_FD, COMP_FD, 21, 22, 1, 0, 0, 64, 0])


def insn(code, dst=0, src=0, off=0, imm=0):
    return struct.pack('<BBhI', code, (src << 4) | dst, off, imm & 0xffffffff)


def k1(kind, size, off):
    return K1_MAGIC | kind << 20 | (size >> 3 & 3) << 18 | (off & 0xffff)


def load_form(s, d, off=0):
    return [insn(0xbc, s, s), insn(0xb7, d, 0, 0, k1(PH_LOAD, DW, off)),
            insn(0x18, d, 2, 0, COMP_FD), insn(0, 0, 0, 0, 0), insn(0x79, d, d)]


def stx_form(s, v, off=8):
    a, b = k1(PH_STX, DW, off), K2_MAGIC
    x = a ^ b
    return [insn(0xbc, s, s), insn(0xa4, s, 0, 0, a), insn(0xa4, s, 0, 0, b),
            insn(0xa4, s, 0, 0, x), insn(0xbf, v, v)]


def prog(writer, between=None, tail=None):
    """r2 = r7; writer; between; form A via r2; r3 += 1; form B via r2; r0 = 0; exit."""
    p = [insn(0xbf, 2, 7)] + writer + (between or []) + load_form(2, 3)
    p += [insn(0x07, 3, 0, 0, 1)] + stx_form(2, 3) + [insn(0xb7, 0)] + (tail or []) + [insn(0x95)]
    return p


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {}
    for op in range(0x00, 0xe0, 0x10):  # every BPF_ALU op, X and K (0xd0: END)
        seeds['alu32x_%02x' % op] = prog([insn(0x04 | 0x08 | op, 2, 7)])
        seeds['alu32k_%02x' % op] = prog([insn(0x04 | op, 2, 0, 0, 3)])
    for imm in (16, 32, 64):
        seeds['end_le_%d' % imm] = prog([insn(0xd4, 2, 0, 0, imm)])
        seeds['end_be_%d' % imm] = prog([insn(0xdc, 2, 0, 0, imm)])
    for code in (0x61, 0x69, 0x71, 0x79, 0x21, 0x81):  # LDX W H B DW, PROBE_MEM W, MEMSX W
        seeds['ldx_%02x' % code] = prog([insn(code, 2, 10, -8)])
    seeds['copy_zext'] = prog([insn(0xbc, 7, 7), insn(0xbf, 2, 7)])
    seeds['copy_64'] = prog([insn(0xbf, 7, 6), insn(0xbf, 2, 7)])
    seeds['call'] = prog([insn(0xbc, 2, 7)], [insn(0x85, 0, 0, 0, 1)])
    # w2 = w7 at 1, then a jump at 2 to L (the `r3 += 1` between the forms, index 8)
    for name, j in (('jeq', insn(0x15, 1, 0, 5)), ('jeq32', insn(0x16, 1, 0, 5)),
                    ('ja', insn(0x05, 0, 0, 5)), ('gotol', insn(0x06, 0, 0, 0, 5)),
                    ('pcall', insn(0x85, 0, 1, 0, 5)), ('jmp32call', insn(0x86, 10, 1, 0, 5))):
        seeds['target_' + name] = prog([insn(0xbc, 2, 7)], [j])
    seeds['target_back'] = prog([insn(0xbc, 2, 7)], None, [insn(0x15, 0, 0, -8)])
    for name, p in seeds.items():
        with open(os.path.join(out, 'raise-' + name), 'wb') as f:
            f.write(env() + b''.join(p))
    print('raise seeds: %d' % len(seeds))


if __name__ == '__main__':
    main()
