#!/usr/bin/env python3
"""objseed.py OUT_DIR OBJ...: a lower_fuzz seed per SEC("syscall") program of each BPF
object, linked roughly as libbpf does (.text subprograms appended, calls and callbacks
relocated, map / global / kfunc references given the fuzz env's fds and ids)."""
import os, struct, sys

ARENA_FD, COMPANION_FD, KF_ALLOC, KF_FREE, OTHER_FD = 7, 9, 21, 22, 5

def env_bytes(flags=2):  # sleepable, user_vm_start 0x1_0000_0000, 64 pages
    return bytes([flags, ARENA_FD, COMPANION_FD, KF_ALLOC, KF_FREE, 1, 0, 0, 64, 0])

def parse(path):
    d = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
    secs = []
    for i in range(shnum):
        name, typ, flags, addr, off, size, link, info, align, entsize = \
            struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize)
        secs.append(dict(name=name, type=typ, off=off, size=size, link=link, info=info))
    shstr = secs[shstrndx]
    def cstr(tab, o):
        s = tab['off'] + o
        return d[s:d.index(b'\0', s)].decode()
    for s in secs:
        s['name'] = cstr(shstr, s['name'])
    symtab = next(s for s in secs if s['type'] == 2)
    strtab = secs[symtab['link']]
    syms = []
    for i in range(symtab['size'] // 24):
        nm, info, oth, shndx, val, size = struct.unpack_from('<IBBHQQ', d, symtab['off'] + 24 * i)
        name = cstr(strtab, nm) if nm else (secs[shndx]['name'] if shndx < len(secs) else '')
        syms.append(dict(name=name, shndx=shndx, value=val))
    return d, secs, syms

def insns_of(d, s):
    return [list(struct.unpack_from('<BBhi', d, s['off'] + 8 * i)) for i in range(s['size'] // 8)]

def link(path):
    d, secs, syms = parse(path)
    out = []
    for pi, ps in enumerate(secs):
        if ps['name'] != 'syscall':
            continue
        prog = insns_of(d, ps)
        text_i = next((i for i, s in enumerate(secs) if s['name'] == '.text'), None)
        base = {pi: 0}
        if text_i is not None and secs[text_i]['size']:
            base[text_i] = len(prog)
            prog += insns_of(d, secs[text_i])
        for ri, rs in enumerate(secs):
            if rs['type'] != 9 or rs['info'] not in base:
                continue
            b = base[rs['info']]
            for k in range(rs['size'] // 16):
                off, info = struct.unpack_from('<QQ', d, rs['off'] + 16 * k)
                sym = syms[info >> 32]
                i = b + off // 8
                ins = prog[i]
                code, regs, o, imm = ins
                ssec = secs[sym['shndx']]['name'] if 0 < sym['shndx'] < len(secs) else ''
                if code == 0x18:  # ld_imm64
                    if ssec == '.text' and text_i in base:
                        tgt = base[text_i] + (sym['value'] + imm) // 8
                        ins[1] = (regs & 0x0f) | (4 << 4)
                        ins[3] = tgt - (i + 1)
                    elif ssec == '.maps':
                        ins[1] = (regs & 0x0f) | (1 << 4)
                        ins[3] = ARENA_FD if 'arena' in sym['name'] else OTHER_FD
                    else:
                        ins[1] = (regs & 0x0f) | (2 << 4)
                        prog[i + 1][3] = sym['value'] + imm
                        ins[3] = ARENA_FD if ssec == '.addr_space.1' else OTHER_FD
                elif code == 0x85:  # call
                    if ssec == '.text' and text_i in base:
                        tgt = base[text_i] + sym['value'] // 8 + imm + 1
                        ins[3] = tgt - (i + 1)
                    else:
                        ins[1] = (regs & 0x0f) | (2 << 4)
                        ins[2] = 1
                        ins[3] = {'bpf_arena_alloc_pages': KF_ALLOC,
                                  'bpf_arena_free_pages': KF_FREE,
                                  # lower_fuzz.c: the iterators follow KF_FREE
                                  'bpf_iter_num_new': KF_FREE + 1,
                                  'bpf_iter_num_next': KF_FREE + 2,
                                  'bpf_iter_num_destroy': KF_FREE + 3}.get(sym['name'], 99)
        out.append(b''.join(struct.pack('<BBhi', *x) for x in prog))
    return out

def main():
    od = sys.argv[1]
    os.makedirs(od, exist_ok=True)
    n = 0
    for obj in sys.argv[2:]:
        for j, blob in enumerate(link(obj)):
            for flags in (2, 3):
                name = '%s.%d.%d' % (os.path.basename(obj), j, flags)
                open(os.path.join(od, name), 'wb').write(env_bytes(flags) + blob)
                n += 1
    print('objseed: %d seeds' % n)

main()
