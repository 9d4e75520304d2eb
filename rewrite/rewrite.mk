# rewrite/rewrite.mk: included by the top Makefile (TOP, BUILD, CC, TEST_CFLAGS are set).
# The rewriter's files for the builds outside Kbuild: its unit tests
# (tests/unit/unit.mk) link them directly.
REWRITE_SRCS := $(TOP)/rewrite/cfg.c $(TOP)/rewrite/lower.c $(TOP)/rewrite/raise.c
REWRITE_DEPS := $(REWRITE_SRCS) $(wildcard $(TOP)/rewrite/*.h)
