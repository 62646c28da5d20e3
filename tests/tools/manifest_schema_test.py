"""Every manifest the build writes (build tree and install copies) and every
manifest the tests consider valid validates against abi/manifest.schema.json;
malformed ones are rejected by the schema too."""
import glob
import json
import sys

import jsonschema


def main(schema_path, build_dir):
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    manifests = sorted(glob.glob(f"{build_dir}/share/accel/backends.d/*.json") +
                       glob.glob(f"{build_dir}/**/install/*.json", recursive=True))
    if not manifests:
        print(f"FAIL: no manifests found under {build_dir}")
        return 1
    failures = 0
    for path in manifests:
        with open(path) as f:
            errors = list(validator.iter_errors(json.load(f)))
        for e in errors:
            print(f"FAIL: {path}: {e.message}")
        failures += bool(errors)
        if not errors:
            print(f"ok: {path}")
    bad = [
        {"file_format_version": "2.0.0", "backend": {"name": "x", "library_path": "x.so", "abi_major": 1}},
        {"file_format_version": "1.0.0", "backend": {"name": "X!", "library_path": "x.so", "abi_major": 1}},
        {"file_format_version": "1.0.0", "backend": {"name": "x", "abi_major": 1}},
        {"file_format_version": "1.0.0", "backend": {"name": "x", "library_path": "x.so", "abi_major": 2}},
    ]
    for doc in bad:
        if validator.is_valid(doc):
            print(f"FAIL: the schema accepts a malformed manifest: {doc}")
            failures += 1
    print(f"{len(manifests) + len(bad) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
