#!/usr/bin/env python3
"""The relocatable-install test, run by ctest (tests/install/CMakeLists.txt).

Installs the build tree to a prefix, moves the prefix, and then, from the moved
tree only:
  - checks the layout and that no installed CMake, pkg-config or manifest file
    names the build tree, the source tree or the first prefix;
  - runs the installed accel-info, which must find the host backend through
    the manifests relative to the moved libaccel;
  - builds an outside CMake project (find_package(Accel), Accel::accel, and an
    out-of-tree backend with accel_add_backend()) and runs its program, which
    lists the devices and launches a kernel; the outside backend loads when its
    manifest is added;
  - builds an outside Makefile project with pkg-config and runs the same program;
  - runs the installed backend kit: accel-backend-new generates a backend from
    the installed template, which builds as its own CMake project
    (find_package(Accel COMPONENTS backend_kit)), loads into the installed
    accel-info and passes the streams profile (with abi, query and memory) of
    the installed accel-conformance;
  - builds backends without CMake, by running the command blocks marked
    `install-test` in the installed docs/backend-checklist.md ("Without CMake"):
    the installed template with g++ (loaded, and certified at streams) and a
    one-device C99 backend with gcc (loaded); both export only the entry point;
    pkg-config accel-backend names the same include folders and version script;
  - checks that every article of docs/ and the ABI's manifest schema and
    changelog are installed in share/doc/accel and that every relative link of
    the installed articles resolves there;
  - compiles <accel/accel_backend.h> from the moved prefix as C99 with
    -Wall -Wextra -Werror -pedantic.

Usage: install_test.py --cmake CMAKE --build-dir DIR --source-dir DIR
                       --consumer DIR --work-dir DIR --cc CC [--cxx CXX] [--flags FLAGS]
FLAGS are compiler and linker flags every outside project gets (the sanitizer
flags of an ASan build, which every program linking that libaccel needs, and
every backend loaded into one).
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")
DOC_DIR = "share/doc/accel"
KIT_DIR = "share/accel/backend-kit"


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def clean_env(extra=None):
    """The environment without the ACCEL_* selections ctest or the user set, so
    that discovery is the default one (manifests relative to libaccel)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCEL_") and k != "PKG_CONFIG_PATH"}
    env.update(extra or {})
    return env


def run(cmd, cwd=None, env=None, what=None):
    what = what or " ".join(shlex.quote(c) for c in cmd)
    proc = subprocess.run(cmd, cwd=cwd, env=env if env is not None else clean_env(), capture_output=True,
                          text=True, timeout=600)
    for marker in SANITIZER_MARKERS:
        check(marker not in proc.stderr, f"{what}: sanitizer report:\n{proc.stderr}")
    check(proc.returncode == 0,
          f"{what}: exit code {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
    return proc.stdout


def install_and_move(args):
    work = os.path.abspath(args.work_dir)
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    staged = os.path.join(work, "staged-prefix")
    run([args.cmake, "--install", args.build_dir, "--prefix", staged])
    moved = os.path.join(work, "elsewhere", "moved prefix")  # a space, too
    os.makedirs(os.path.dirname(moved))
    shutil.move(staged, moved)
    print(f"installed to {staged}, moved to {moved}")
    return work, staged, moved


def check_layout(moved):
    expected = [
        "include/accel/accel.h", "include/accel/accel.hpp", "include/accel/accel_backend.h",
        "lib/libaccel.so", "lib/accel/backends/libaccel_backend_host.so",
        "share/accel/backends.d/host.json", "lib/cmake/Accel/AccelConfig.cmake",
        "lib/cmake/Accel/AccelConfigVersion.cmake", "lib/cmake/Accel/AccelTargets.cmake",
        "lib/cmake/Accel/AccelBackend.cmake", "lib/pkgconfig/accel.pc", "bin/accel-info",
        "lib/accel/backends/libaccel_backend_sim.so", "share/accel/backends.d/sim.json",
        "share/accel/sim/profiles/h100-sxm-8.json", "bin/accel-backend-new",
        "share/accel/backend-kit/template/CMakeLists.txt", "share/accel/backend-kit/template/README.md",
        "share/accel/backend-kit/template/expectations.json", "share/accel/backend-kit/backend.map",
        "lib/pkgconfig/accel-backend.pc", "include/accel/runtime.h", "include/accel/object_store.h",
        "lib/libaccel-runtime.so", "libexec/accel/accel-object-agent",
    ]
    missing = [p for p in expected if not os.path.exists(os.path.join(moved, p))]
    check(not missing, f"the installed tree lacks {missing}")
    print(f"layout: {len(expected)} expected paths present")


def check_no_foreign_paths(moved, forbidden):
    scanned = 0
    for folder in ("lib/cmake", "lib/pkgconfig", "share/accel", DOC_DIR):
        for root, _, files in os.walk(os.path.join(moved, folder)):
            for name in files:
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    if b"\0" in f.read():
                        continue  # binary (the conformance corpus's kernels): debug info may name the build
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                scanned += 1
                for bad in forbidden:
                    check(bad not in text, f"{path} names {bad!r}:\n{text}")
    check(scanned >= 6, f"only {scanned} installed CMake/pkg-config/manifest files found")
    for name in os.listdir(os.path.join(moved, "share/accel/backends.d")):
        with open(os.path.join(moved, "share/accel/backends.d", name), encoding="utf-8") as f:
            library = json.load(f)["backend"]["library_path"]
        check(not os.path.isabs(library), f"manifest {name}: library_path {library!r} is absolute")
    print(f"no build, source or staging path in {scanned} installed files")


def check_manifests_found_under(moved, loader_lines_or_entries, label):
    manifests = [m for m in loader_lines_or_entries if m]
    check(manifests, f"{label}: no loader entry came from a manifest")
    real_moved = os.path.realpath(moved)
    for m in manifests:
        check(os.path.realpath(m).startswith(real_moved + os.sep),
              f"{label}: manifest {m!r} is not in the moved prefix {moved!r}")


def check_accel_info(moved):
    out = run([os.path.join(moved, "bin/accel-info"), "--json"], what="installed accel-info --json")
    doc = json.loads(out)
    loaded = [e for e in doc["loader"] if e["state"] == "loaded"]
    check(any(e["backend"] == "host" for e in loaded), f"installed accel-info did not load host: {doc['loader']}")
    check_manifests_found_under(moved, [e["manifest_path"] for e in loaded], "accel-info")
    check(any(d["kind"] == "cpu" for d in doc["physical_devices"]), "installed accel-info lists no cpu device")
    print("installed accel-info finds the host backend through the moved manifests")
    # The sim backend finds its shipped profiles relative to itself, and accel-info lists them relative to itself.
    out = run([os.path.join(moved, "bin/accel-info"), "--json"], env=clean_env({"ACCEL_SIM_PROFILE": "h100-sxm-8"}),
              what="installed accel-info --json with ACCEL_SIM_PROFILE=h100-sxm-8")
    simulated = [d for d in json.loads(out)["physical_devices"] if d["simulated"]]
    check(len(simulated) == 8, f"the moved sim backend simulates {len(simulated)} devices of h100-sxm-8, not 8")
    listing = run([os.path.join(moved, "bin/accel-info"), "profiles"], what="installed accel-info profiles")
    check("h100-sxm-8" in listing and os.path.realpath(moved) in os.path.realpath(listing.split("(")[1].split(")")[0]),
          f"installed accel-info profiles does not list the moved profiles:\n{listing}")
    print("the moved sim backend and accel-info find the shipped profiles")


def parse_program(out, label, moved, want_outside=False):
    lines = out.splitlines()
    loaded = [ln for ln in lines if ln.startswith("loader:") and "state=loaded" in ln]
    manifests = [ln.split(" manifest=", 1)[1].split(" library=", 1)[0] for ln in loaded]
    check_manifests_found_under(moved, [m for m in manifests if "/consumer-cmake/" not in m], label)
    check(any("backend=host" in ln for ln in loaded), f"{label}: host did not load:\n{out}")
    check(any(ln.startswith("device ") and "(backend host)" in ln for ln in lines), f"{label}: no host device:\n{out}")
    check(any(ln.startswith("kernel: vadd") and ln.endswith(": ok") for ln in lines), f"{label}: no kernel:\n{out}")
    if want_outside:
        check(any("backend=outside" in ln for ln in loaded), f"{label}: the outside backend did not load:\n{out}")
        check(any("Outside kit device (backend outside)" in ln for ln in lines), f"{label}: no outside device:\n{out}")


def cmake_consumer(args, work, moved):
    src = os.path.join(work, "consumer-cmake")
    shutil.copytree(args.consumer, src)
    build = os.path.join(src, "build")
    run([args.cmake, "-S", src, "-B", build, "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={moved}",
         f"-DCMAKE_C_COMPILER={args.cc}", f"-DCMAKE_C_FLAGS={args.flags}", f"-DCMAKE_EXE_LINKER_FLAGS={args.flags}",
         f"-DCMAKE_MODULE_LINKER_FLAGS={args.flags}"], what="configure the find_package consumer")
    run([args.cmake, "--build", build], what="build the find_package consumer")
    program = os.path.join(build, "list_and_launch")
    out = run([program], what="the find_package consumer")
    parse_program(out, "find_package consumer", moved)
    manifest = os.path.join(build, "outside.json")
    check(os.path.exists(manifest), f"accel_add_backend() wrote no manifest at {manifest}")
    out = run([program], env=clean_env({"ACCEL_ADD_BACKEND_FILES": manifest}),
              what="the find_package consumer with the outside backend")
    parse_program(out, "find_package consumer + outside backend", moved, want_outside=True)
    print("find_package consumer: built, listed devices, launched a kernel; its own backend loaded")


def make_consumer(args, work, moved):
    src = os.path.join(work, "consumer-make")
    shutil.copytree(args.consumer, src, ignore=shutil.ignore_patterns("CMakeLists.txt", "outside_backend.c"))
    env = clean_env({"PKG_CONFIG_PATH": os.path.join(moved, "lib/pkgconfig")})
    cflags = run(["pkg-config", "--cflags", "accel"], env=env, what="pkg-config --cflags accel")
    includes = [os.path.realpath(w[2:]) for w in shlex.split(cflags) if w.startswith("-I")]
    check(includes and all(i == os.path.realpath(os.path.join(moved, "include")) for i in includes),
          f"pkg-config --cflags does not point at the moved prefix's include folder: {cflags!r}")
    run(["make", "-C", src, f"CC={args.cc}", f"CFLAGS={args.flags}", f"LDFLAGS={args.flags}"], env=env,
        what="make the pkg-config consumer")
    out = run([os.path.join(src, "list_and_launch")], what="the pkg-config consumer")
    parse_program(out, "pkg-config consumer", moved)
    print("pkg-config consumer: built with make, listed devices, launched a kernel")


def backend_kit(args, work, moved):
    """The installed backend kit, from the moved prefix only: generate a backend, build it, load it, certify it."""
    generator = os.path.join(moved, "bin/accel-backend-new")
    check(os.access(generator, os.X_OK), f"{generator} is not executable")
    kit = os.path.join(work, "kit")
    os.makedirs(kit)
    out = run([generator, "acme", "--output", kit, "--vendor", "Acme Corp"], what="installed accel-backend-new")
    src = os.path.join(kit, "acme")
    check(os.path.isfile(os.path.join(src, "CMakeLists.txt")), f"accel-backend-new made no project in {src}:\n{out}")
    check(os.path.realpath(moved) in out, f"accel-backend-new's next steps do not name the moved prefix:\n{out}")

    build = os.path.join(src, "build")
    configure = [args.cmake, "-S", src, "-B", build, "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={moved}",
                 f"-DCMAKE_CXX_FLAGS={args.flags}", f"-DCMAKE_MODULE_LINKER_FLAGS={args.flags}"]
    if args.cxx:
        configure.append(f"-DCMAKE_CXX_COMPILER={args.cxx}")
    run(configure, what="configure the generated backend")
    run([args.cmake, "--build", build], what="build the generated backend")
    manifest = os.path.join(build, "acme.json")
    library = os.path.join(build, "libaccel_backend_acme.so")
    for path in (manifest, library):
        check(os.path.isfile(path), f"the generated backend's build has no {path}")
    print("backend kit: accel-backend-new made 'acme', which built against the moved prefix")

    # find_package(Accel COMPONENTS ...) knows backend_kit only: an unknown component fails.
    probe = os.path.join(kit, "unknown-component")
    os.makedirs(probe)
    with open(os.path.join(probe, "CMakeLists.txt"), "w", encoding="utf-8") as f:
        f.write("cmake_minimum_required(VERSION 3.25)\nproject(probe NONE)\n"
                "find_package(Accel 1.0 REQUIRED COMPONENTS backend_kit no_such_component)\n")
    proc = subprocess.run([args.cmake, "-S", probe, "-B", os.path.join(probe, "build"), f"-DCMAKE_PREFIX_PATH={moved}"],
                          env=clean_env(), capture_output=True, text=True, timeout=120)
    check(proc.returncode != 0 and "no_such_component" in proc.stdout + proc.stderr,
          f"find_package(Accel COMPONENTS no_such_component) did not fail naming it (exit code {proc.returncode}):\n"
          f"{proc.stdout}{proc.stderr}")
    print("backend kit: find_package(Accel COMPONENTS backend_kit) works, an unknown component fails")

    # (a) The moved accel-info loads it, alone.
    check_backend_loads(moved, manifest, "acme", "Acme device", vendor="Acme Corp")
    print("backend kit: the moved accel-info lists 'Acme device' (backend acme)")

    # (b) It passes the streams profile of the moved accel-conformance.
    conformance = os.path.join(moved, "bin/accel-conformance")
    check(os.path.exists(conformance), f"{conformance} is not installed")
    cert = os.path.join(kit, "cert.json")
    junit = os.path.join(kit, "results.xml")
    run([conformance, "--backend", manifest, "--profile", "streams", "--expectations",
         os.path.join(src, "expectations.json"), "--json", cert, "--junit", junit],
        what="installed accel-conformance --profile streams on the generated backend")
    check_streams_certificate(cert, junit)
    print("backend kit: the generated backend passes the streams profile of the moved accel-conformance")


def check_backend_loads(moved, manifest, name, device, vendor=None):
    """The moved accel-info, given only `manifest`, loads backend `name` alone and lists its `device`."""
    doc = json.loads(run([os.path.join(moved, "bin/accel-info"), "--json"],
                         env=clean_env({"ACCEL_BACKEND_FILES": manifest}),
                         what=f"installed accel-info --json with backend {name}"))
    loaded = [e for e in doc["loader"] if e["state"] == "loaded"]
    check([e["backend"] for e in loaded] == [name], f"accel-info did not load only {name!r}: {doc['loader']}")
    paths = [p for d in doc["physical_devices"] for p in d["access_paths"]]
    check(any(p["backend"] == name and p["name"] == device for p in paths),
          f"accel-info lists no {device!r} of backend {name}: {doc['physical_devices']}")
    if vendor is not None:
        check(any(p["capabilities"].get("vendor") == vendor for p in paths),
              f"the device's vendor is not {vendor!r}: {paths}")


def check_streams_certificate(cert, junit):
    with open(cert, encoding="utf-8") as f:
        certificate = json.load(f)
    check(certificate.get("result") == "pass", f"certificate result is {certificate.get('result')!r}, not 'pass'")
    profile = certificate.get("profile_passed")
    check(profile == "streams", f"the certificate's profile passed is {profile!r}, not 'streams'")
    check(certificate["counts"]["streams"]["failed"] == 0 and certificate["counts"]["streams"]["passed"] > 0,
          f"the streams profile did not pass: {certificate['counts']}")
    check(os.path.isfile(junit), f"accel-conformance wrote no {junit}")


def check_exports_only_entry_point(library):
    out = run(["nm", "-D", "--defined-only", library], what=f"nm -D --defined-only {library}")
    symbols = [ln.split()[-1] for ln in out.splitlines() if ln.strip()]
    check(symbols == ["accel_backend_get_api"], f"{library} exports {symbols}, not only accel_backend_get_api")


def checklist_blocks(moved):
    """The command blocks of the installed backend-checklist.md marked `<!-- install-test: NAME -->`, by NAME."""
    path = os.path.join(moved, DOC_DIR, "backend-checklist.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    blocks = dict(re.findall(r"<!-- install-test: ([a-z-]+) -->\n```sh\n(.*?)\n```", text, re.S))
    for name in ("build-cxx", "build-c", "manifest", "check", "certify"):
        check(name in blocks, f"{path} has no command block marked 'install-test: {name}'")
    return blocks


def run_checklist_blocks(args, moved, blocks, names, folder, backend):
    """Runs the blocks `names`, as written, with bash in `folder`: ACCEL is the moved prefix, NAME `backend`, the
    moved bin/ first on PATH. g++ and gcc are this build's compilers with --flags (the sanitizers); gcc also gets
    -Wall -Wextra -Werror -pedantic, so the C backend proves the header is clean C99."""
    prelude = ('g++() { command "$KIT_TEST_CXX" $KIT_TEST_FLAGS "$@"; }\n'
               'gcc() { command "$KIT_TEST_CC" $KIT_TEST_FLAGS -Wall -Wextra -Werror -pedantic "$@"; }\n')
    env = clean_env({"ACCEL": moved, "NAME": backend, "KIT_TEST_CXX": args.cxx or "g++", "KIT_TEST_CC": args.cc,
                     "KIT_TEST_FLAGS": args.flags,
                     "PATH": os.path.join(moved, "bin") + os.pathsep + os.environ.get("PATH", "")})
    for name in names:
        out = run(["bash", "-euo", "pipefail", "-c", prelude + blocks[name]], cwd=folder, env=env,
                  what=f"backend-checklist.md block '{name}' for {backend} in {folder}")
        if name == "check":
            check("accel_backend_get_api" in out and backend in out,
                  f"block 'check' printed neither the entry point nor {backend}:\n{out}")


def plain_compiler_backends(args, work, moved):
    """Backends built without CMake, from the moved prefix only, by the installed checklist's own commands."""
    blocks = checklist_blocks(moved)
    plain = os.path.join(work, "plain")
    os.makedirs(plain)

    # The installed template with g++: loads, and passes the streams profile.
    src = os.path.join(plain, "template")
    shutil.copytree(os.path.join(moved, KIT_DIR, "template"), src)
    run_checklist_blocks(args, moved, blocks, ["build-cxx", "manifest", "check", "certify"], src, "template")
    check_exports_only_entry_point(os.path.join(src, "libaccel_backend_template.so"))
    check_backend_loads(moved, os.path.join(src, "template.json"), "template", "Template device")
    check_streams_certificate(os.path.join(src, "cert.json"), os.path.join(src, "results.xml"))
    print("no CMake: the installed template, built with g++ by the checklist's commands, exports only the entry "
          "point, loads and passes the streams profile")

    # A one-device C99 backend with gcc: loads.
    src = os.path.join(plain, "outside")
    os.makedirs(src)
    shutil.copy(os.path.join(args.consumer, "outside_backend.c"), os.path.join(src, "backend.c"))
    run_checklist_blocks(args, moved, blocks, ["build-c", "manifest", "check"], src, "outside")
    check_exports_only_entry_point(os.path.join(src, "libaccel_backend_outside.so"))
    check_backend_loads(moved, os.path.join(src, "outside.json"), "outside", "Outside kit device")
    print("no CMake: a C99 backend built with gcc by the checklist's commands exports only the entry point and loads")

    # pkg-config accel-backend: the same include folders and version script, in the moved prefix.
    env = clean_env({"PKG_CONFIG_PATH": os.path.join(moved, "lib/pkgconfig")})
    real = os.path.realpath
    cflags = shlex.split(run(["pkg-config", "--cflags", "accel-backend"], env=env,
                             what="pkg-config --cflags accel-backend"))
    includes = {real(w[2:]) for w in cflags if w.startswith("-I")}
    check(includes == {real(os.path.join(moved, "include")), real(os.path.join(moved, "include/accel"))}
          and "-fvisibility=hidden" in cflags, f"pkg-config --cflags accel-backend: {cflags}")
    script = shlex.split(run(["pkg-config", "--variable=version_script", "accel-backend"], env=env,
                             what="pkg-config --variable=version_script accel-backend"))
    check(len(script) == 1 and real(script[0]) == real(os.path.join(moved, KIT_DIR, "backend.map")),
          f"pkg-config --variable=version_script accel-backend: {script}")
    libs = shlex.split(run(["pkg-config", "--libs", "accel-backend"], env=env, what="pkg-config --libs accel-backend"))
    check(any(w.startswith("-Wl,") and {"--version-script", "--no-undefined"} <= set(w.split(","))
              and real(w.split("--version-script,", 1)[1]) == real(script[0]) for w in libs),
          f"pkg-config --libs accel-backend does not give --no-undefined and the version script: {libs}")
    for variable, path in (("templatedir", os.path.join(KIT_DIR, "template")), ("docdir", DOC_DIR)):
        value = shlex.split(run(["pkg-config", f"--variable={variable}", "accel-backend"], env=env,
                                what=f"pkg-config --variable={variable} accel-backend"))
        check(len(value) == 1 and real(value[0]) == real(os.path.join(moved, path)),
              f"pkg-config --variable={variable} accel-backend: {value}")
    print("no CMake: pkg-config accel-backend names the moved include folders, version script, template and docs")


def check_installed_docs(args, moved):
    """docs/*.md and *.json, and the ABI's manifest schema and changelog, are in share/doc/accel; every relative link
    of the installed articles resolves inside it."""
    docdir = os.path.join(moved, DOC_DIR)
    source_docs = os.path.join(args.source_dir, "docs")
    expected = sorted(n for n in os.listdir(source_docs) if n.endswith((".md", ".json")))
    expected += ["abi/manifest.schema.json", "abi/CHANGELOG.md"]
    missing = [n for n in expected if not os.path.isfile(os.path.join(docdir, n))]
    check(not missing, f"{docdir} lacks {missing}")
    links = 0
    for name in sorted(os.listdir(docdir)):
        if not name.endswith(".md"):
            continue
        with open(os.path.join(docdir, name), encoding="utf-8") as f:
            text = f.read()
        # Code is not Markdown: a C++ lambda `[](T&)` in a fenced block or inline code is no link.
        text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
        text = re.sub(r"`[^`\n]*`", "", text)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            resolved = os.path.normpath(os.path.join(docdir, target.split("#", 1)[0]))
            check(resolved.startswith(docdir + os.sep) and os.path.exists(resolved),
                  f"{DOC_DIR}/{name}: the link {target!r} does not resolve in the installed docs ({resolved})")
            links += 1
    check(links >= 10, f"only {links} relative links found in the installed docs")
    print(f"docs: {len(expected)} files in {DOC_DIR}, {links} relative links resolve there")


def c99_backend_header(args, work, moved):
    """<accel/accel_backend.h> from the moved prefix compiles as strict C99."""
    folder = os.path.join(work, "c99")
    os.makedirs(folder)
    source = os.path.join(folder, "entry.c")
    with open(source, "w", encoding="utf-8") as f:
        f.write("#include <accel/accel_backend.h>\n\n"
                "ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args) {\n"
                "  return args == NULL ? ACCEL_ERROR_INVALID_ARGUMENT : ACCEL_ERROR_INCOMPATIBLE_VERSION;\n}\n")
    run([args.cc, *shlex.split(args.flags), "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
         "-I" + os.path.join(moved, "include"), "-c", source, "-o", os.path.join(folder, "entry.o")],
        what="gcc -std=c99 -Wall -Wextra -Werror -pedantic with <accel/accel_backend.h>")
    print("C99: <accel/accel_backend.h> from the moved prefix compiles with -std=c99 -Wall -Wextra -Werror -pedantic")


def main():
    p = argparse.ArgumentParser()
    for name in ("cmake", "build-dir", "source-dir", "consumer", "work-dir", "cc"):
        p.add_argument("--" + name, required=True)
    p.add_argument("--cxx", default="", help="the C++ compiler for the backend kit's project (default: CMake's)")
    p.add_argument("--flags", default="")
    args = p.parse_args()
    try:
        work, staged, moved = install_and_move(args)
        check_layout(moved)
        check_no_foreign_paths(moved, [os.path.abspath(args.build_dir), os.path.abspath(args.source_dir), staged])
        check_accel_info(moved)
        cmake_consumer(args, work, moved)
        make_consumer(args, work, moved)
        backend_kit(args, work, moved)
        check_installed_docs(args, moved)
        c99_backend_header(args, work, moved)
        plain_compiler_backends(args, work, moved)
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
