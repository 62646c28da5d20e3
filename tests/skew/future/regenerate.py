#!/usr/bin/env python3
"""Rewrites tests/skew/future/accel_backend.h from abi/accel_backend.h: the
synthetic "future 1.2" header of the skew tests is today's header plus one
table slot and one field of accel_backend_get_api_args_t. Run it after every
change to abi/accel_backend.h; with --check it only says whether the kept
copy is current (the ctest skew_header_current runs that)."""
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parents[3]
text = (root / "abi/accel_backend.h").read_text()


def replace(old, new):
    global text
    if old not in text:
        sys.exit(f"regenerate.py: '{old.strip()[:60]}' not found in abi/accel_backend.h")
    text = text.replace(old, new, 1)


replace(" * Accel backend plugin ABI, 1.1.",
        ' * SYNTHETIC "future 1.2" copy of abi/accel_backend.h, kept for the skew tests\n'
        " * (tests/skew): ABI 1.2 adds one table slot and one field of\n"
        " * accel_backend_get_api_args_t. Never installed, never used outside tests.\n"
        " * Regenerate with tests/skew/future/regenerate.py.\n"
        " *\n"
        " * Accel backend plugin ABI, 1.2.")
replace("#define ACCEL_BACKEND_ABI_VERSION_MINOR 1", "#define ACCEL_BACKEND_ABI_VERSION_MINOR 2")
replace("  /* New slots go here, at the end,",
        "  /* --- 1.2 ---------------------------------------------------------------- */\n"
        "  accel_status_t (*device_get_future_value)(accel_bk_device_t device, uint32_t* out_value);\n"
        "  /* New slots go here, at the end,")
replace("  const accel_backend_api_t* out_api; /* [out] static table */\n",
        "  const accel_backend_api_t* out_api; /* [out] static table */\n"
        "  uint64_t core_features;             /* [in] 1.2: bit set of core features */\n")
target = root / "tests/skew/future/accel_backend.h"
if "--check" in sys.argv[1:]:
    if target.read_text() != text:
        sys.exit("tests/skew/future/accel_backend.h is stale: run tests/skew/future/regenerate.py")
else:
    target.write_text(text)
