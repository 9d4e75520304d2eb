# rewrite/rewrite.mk: included by the top Makefile (TOP, BUILD, CC, TEST_CFLAGS are set).
# The rewriter's files for the builds outside Kbuild: its unit tests
# (tests/unit/unit.mk) link them directly.  The lowering's files
# (lower_internal.h names each one's job); the loop and fuzz tests link them too.
LOWER_SRCS := $(addprefix $(TOP)/rewrite/,lower.c lower_classify.c lower_structure.c \
	lower_dataflow.c lower_iter_state.c lower_emit.c lower_placeholders.c lower_iter.c)
REWRITE_SRCS := $(TOP)/rewrite/cfg.c $(TOP)/rewrite/helper_args.c $(LOWER_SRCS) $(TOP)/rewrite/raise.c
REWRITE_DEPS := $(REWRITE_SRCS) $(wildcard $(TOP)/rewrite/*.h)
