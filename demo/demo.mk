# demo/demo.mk: the demo binary, included by the top-level Makefile
# (TOP, BUILD, CC, USER_CFLAGS, VERSION, LIB_A, DEMO_BIN are set there).
#
# demo/htab.bpf.c is built with clang-19 -mcpu=v3 (native address-space
# casts, as tests/progs/progs.mk's .v3 objects) into build/demo/ (not build/bin:
# the VM runner copies all of that into the guest) and embedded into
# bpf-arena-demo with .incbin, so the binary needs nothing else at run time.
DEMO_CLANG ?= clang-19
DEMO_OBJ := $(BUILD)/demo/htab.bpf.o
DEMO_HDRS := $(TOP)/demo/demo_htab.h $(wildcard $(TOP)/lib/include/*.h) $(wildcard $(TOP)/uapi/*/*.h)

$(DEMO_OBJ): $(TOP)/demo/htab.bpf.c $(DEMO_HDRS)
	@mkdir -p $(dir $@)
	$(DEMO_CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror \
		-I$(TOP)/lib/include -I$(TOP)/demo -I/usr/include/$(shell $(CC) -dumpmachine) \
		-c -o $@ $<

$(DEMO_BIN): $(TOP)/demo/bpf_arena_demo.c $(DEMO_OBJ) $(DEMO_HDRS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -std=gnu11 -I$(TOP)/demo -DBPF_ARENA_VERSION='"$(VERSION)"' \
		-DDEMO_BPF_OBJ='"$(DEMO_OBJ)"' -o $@ $< $(LIB_A) -lbpf
