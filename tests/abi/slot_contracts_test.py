#!/usr/bin/env python3
"""Every slot of the backend ABI states its contract next to it (issue 22).

Fails, naming the slot, when a function-pointer member of
accel_backend_api_t or accel_host_services_t in abi/accel_backend.h has no
comment block right above it (a section banner does not count) or on its
line; when the facts a backend author needs are missing from their slot's
comment (zero sizes, host-memory lifetimes, fill pattern checks, never
recorded events, the capability fields the core owns, ...); when the
native-host structs of accel.h do not state their array strides and
local-memory rule; and when a docs/<name>.md that the public headers name does
not exist in docs/. Python 3, standard library only.

  slot_contracts_test.py --source-dir <repo> [--backend-header <copy of accel_backend.h>]
"""
import argparse
import os
import re
import sys

# The facts asked for in issue 22, by slot: (what, regex over the slot's comment text).
SLOT_FACTS = {
    "context_create": [("a missing runtime", r"ACCEL_ERROR_BACKEND_UNAVAILABLE")],
    "context_destroy": [("when it is called", r"once")],
    "stream_copy_host_to_buffer": [
        ("zero-size copies", r"zero-size copy"),
        ("the host memory's lifetime", r"valid until the copy completes"),
    ],
    "stream_copy_buffer_to_host": [
        ("zero-size copies", r"zero-size copy"),
        ("the host memory's lifetime", r"valid until the copy completes"),
    ],
    "stream_copy_buffer": [("zero-size copies", r"zero-size copy")],
    "stream_fill_buffer": [
        ("the pattern size check", r"pattern_size 1, 2 or 4"),
        ("the alignment check", r"multiples of pattern_size"),
        ("zero-size fills", r"zero-size fill"),
        ("the pattern's lifetime", r"valid for the call only"),
    ],
    "stream_free_buffer": [("what a failure leaves", r"buffer_destroy")],
    "stream_wait_event": [("an event never recorded", r"never\s+recorded is complete")],
    "stream_query": [("that it never blocks", r"Never blocks"), ("pending work", r"ACCEL_NOT_READY")],
    "stream_synchronize": [("the timeout", r"ACCEL_ERROR_TIMEOUT")],
    "stream_clear_error": [("clearing with work pending", r"ACCEL_ERROR_FAILED_PRECONDITION[^.]*pending")],
    "event_query": [("an event never recorded", r"never\s+recorded is complete")],
    "event_synchronize": [("an event never recorded", r"never\s+recorded is complete")],
    "event_elapsed_time": [
        ("an event never recorded", r"ACCEL_ERROR_FAILED_PRECONDITION[^.]*never recorded"),
        ("a pending event", r"ACCEL_NOT_READY"),
    ],
    "module_get_kernel": [("an unknown name", r"ACCEL_ERROR_NOT_FOUND")],
    "stream_launch_kernel": [("the launch's lifetime", r"valid for\s+the call only")],
    "buffer_import": [("the release callback", r"exactly once")],
    "buffer_destroy": [("pending work", r"[Ww]ork queued")],
}

# Structs of accel.h whose comment must state a rule: (struct, what, regex over the comment above it).
STRUCT_FACTS = [
    ("accel_native_module_t", "the stride of kernels[]", r"stride of kernels\[0\]\.struct_size"),
    ("accel_native_kernel_desc_t", "the stride of arguments[]", r"stride of arguments\[0\]\.struct_size"),
    ("accel_native_work_group_t", "one local-memory block per work-group", r"local-memory block of its own"),
]

FUNCTION_POINTER = re.compile(r"\(\s*\*\s*(\w+)\s*\)\s*\(")
BANNER = re.compile(r"^/\*\s*---")


def struct_body(lines, name):
    """(first line index, lines) of the body of `typedef struct name { ... } name;`."""
    start = next((i for i, l in enumerate(lines) if re.match(r"\s*typedef struct %s\s*\{" % re.escape(name), l)), None)
    if start is None:
        return None, []
    end = next((i for i in range(start, len(lines)) if re.match(r"\s*\}\s*%s\s*;" % re.escape(name), lines[i])), None)
    if end is None:
        return None, []
    return start + 1, lines[start + 1:end]


def comment_above(lines, index):
    """The text of the comment block that ends on the line right above `index`, or None. Only lines that are
    comment lines count (a previous member's trailing comment does not)."""
    j = index - 1
    if j < 0 or not lines[j].strip().endswith("*/"):
        return None
    k = j
    while k >= 0 and not lines[k].strip().startswith("/*"):
        if not lines[k].strip().startswith("*"):
            return None
        k -= 1
    if k < 0:
        return None
    block = [l.strip() for l in lines[k:j + 1]]
    if len(block) == 1 and BANNER.match(block[0]):
        return None  # a section banner, not a contract
    return text_of(block)


def text_of(block):
    text = " ".join(block)
    text = re.sub(r"/\*|\*/", " ", text)
    text = re.sub(r"(^|\s)\*(?=\s)", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def slots(lines, struct):
    """[(name, line number, comment text or None)] for the function-pointer members of `struct`."""
    first, body = struct_body(lines, struct)
    out = []
    if first is None:
        return out
    i = 0
    while i < len(body):
        m = FUNCTION_POINTER.search(body[i])
        if m is None:
            i += 1
            continue
        end = i
        while end < len(body) and ";" not in body[end]:
            end += 1
        declaration = body[i:end + 1]
        comment = comment_above(body, i)
        if comment is None:
            inline = [re.search(r"/\*.*?\*/", l) for l in declaration]
            inline = [c.group(0) for c in inline if c is not None]
            comment = text_of(inline) if inline else None
        out.append((m.group(1), first + i + 1, comment))
        i = end + 1
    return out


def fields(lines, struct):
    first, body = struct_body(lines, struct)
    names = []
    for l in body:
        m = re.match(r"\s*[\w\s\*]+?\b(\w+)\s*(\[[^\]]*\])?\s*;", l)
        if m:
            names.append(m.group(1))
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--backend-header", help="the accel_backend.h to check (default: <source-dir>/abi/accel_backend.h)")
    args = ap.parse_args()
    root = os.path.abspath(args.source_dir)
    backend_header = args.backend_header or os.path.join(root, "abi", "accel_backend.h")
    accel_h = os.path.join(root, "include", "accel", "accel.h")
    accel_hpp = os.path.join(root, "include", "accel", "accel.hpp")
    failures = []

    backend_lines = open(backend_header).read().splitlines()
    accel_lines = open(accel_h).read().splitlines()
    shown = os.path.relpath(backend_header, root) if backend_header.startswith(root) else backend_header

    found = {}
    for struct, minimum in (("accel_backend_api_t", 40), ("accel_host_services_t", 5)):
        members = slots(backend_lines, struct)
        if len(members) < minimum:
            failures.append(f"{shown}: found {len(members)} function pointers in {struct}, expected at least "
                            f"{minimum}: the parser no longer understands the header")
        for name, line, comment in members:
            found[name] = comment
            if comment is None:
                failures.append(f"{shown}:{line}: {struct}.{name} has no comment stating its contract right above it "
                                "(or on its line)")

    for slot, facts in SLOT_FACTS.items():
        if slot not in found:
            failures.append(f"{shown}: slot {slot} not found in accel_backend_api_t")
            continue
        for what, pattern in facts:
            if found[slot] is not None and not re.search(pattern, found[slot]):
                failures.append(f"{shown}: the comment of slot {slot} does not state {what} (/{pattern}/)")

    # device_get_capabilities: every field of the struct is named, as the backend's or the core's.
    caps = found.get("device_get_capabilities")
    cap_fields = [f for f in fields(accel_lines, "accel_device_capabilities_t") if not f.startswith("reserved")]
    if len(cap_fields) < 20:
        failures.append(f"include/accel/accel.h: found {len(cap_fields)} fields in accel_device_capabilities_t")
    if caps is not None:
        for f in cap_fields:
            if not re.search(r"\b%s\b" % re.escape(f), caps):
                failures.append(f"{shown}: the comment of slot device_get_capabilities does not say who writes "
                                f"accel_device_capabilities_t.{f}")
        if not re.search(r"core owns[^.]*stable_id[^.]*backend_name", caps):
            failures.append(f"{shown}: the comment of slot device_get_capabilities does not say that stable_id and "
                            "backend_name are the core's")

    # The entry point.
    entry = next((i for i, l in enumerate(backend_lines) if "(*accel_backend_get_api_fn)" in l), None)
    entry_comment = comment_above(backend_lines, entry) if entry is not None else None
    if entry_comment is None or "ACCEL_ERROR_INCOMPATIBLE_VERSION" not in entry_comment:
        failures.append(f"{shown}: accel_backend_get_api_fn has no comment stating the negotiation contract")

    # The launch structs, the context description and the negotiation arguments each have a comment.
    for struct in ("accel_bk_kernel_arg_t", "accel_bk_launch_t", "accel_bk_context_desc_t",
                   "accel_backend_get_api_args_t", "accel_host_services_t"):
        at = next((i for i, l in enumerate(backend_lines) if re.match(r"typedef struct %s\s*\{" % struct, l)), None)
        if at is None or comment_above(backend_lines, at) is None:
            failures.append(f"{shown}: {struct} has no comment right above it")

    # native-host structs of accel.h.
    for struct, what, pattern in STRUCT_FACTS:
        at = next((i for i, l in enumerate(accel_lines) if re.match(r"typedef struct %s\s*\{" % struct, l)), None)
        comment = comment_above(accel_lines, at) if at is not None else None
        if comment is None or not re.search(pattern, comment):
            failures.append(f"include/accel/accel.h: the comment of {struct} does not state {what} (/{pattern}/)")

    # Every docs/<name>.md the public headers name exists.
    docs = os.path.join(root, "docs")
    for path in (accel_h, accel_hpp, backend_header):
        text = open(path).read()
        for name in sorted(set(re.findall(r"docs/([A-Za-z0-9_.-]+\.md)", text))):
            if not os.path.isfile(os.path.join(docs, name)):
                failures.append(f"{os.path.relpath(path, root) if path.startswith(root) else path}: names "
                                f"docs/{name}, which does not exist")

    if failures:
        for f in failures:
            print("FAIL: " + f)
        return 1
    print(f"PASS: {len(found)} slots and services each state their contract; the facts of issue 22 are next to "
          "their slots; every docs/<name>.md the public headers name exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
