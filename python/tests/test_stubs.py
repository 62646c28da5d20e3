"""The type stubs (accel/__init__.pyi) and the package agree: every public name and member in one is in the other."""
import ast
import pathlib

import accel

STUBS = pathlib.Path(accel.__file__).with_name("__init__.pyi")
PRIVATE_OK = {"__init__", "__enter__", "__exit__", "__eq__", "__hash__", "__len__", "__getitem__", "__setitem__", "__array__",
              "__dlpack__", "__dlpack_device__", "__array_interface__"}


def stub_tree():
    return ast.parse(STUBS.read_text())


def public(names):
    return {n for n in names if not n.startswith("_") or n in PRIVATE_OK}


def test_every_exported_name_has_a_stub():
    tree = stub_tree()
    stubbed = {node.name for node in tree.body
               if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_")}
    assert set(accel.__all__) == stubbed


def test_every_class_member_has_a_stub_and_exists():
    for node in stub_tree().body:
        if not isinstance(node, ast.ClassDef) or node.name.startswith("_") or node.name == "Status":
            continue
        cls = getattr(accel, node.name)
        if issubclass(cls, BaseException):  # AccelError and its subclasses: members of BaseException
            continue
        stubbed = public(item.name for item in node.body if isinstance(item, ast.FunctionDef))
        # pybind11 gives every class an __init__ (one that raises where there is no constructor): not compared.
        actual = public(n for n in dir(cls) if n not in dir(object) or (n in ("__eq__", "__hash__") and n in vars(cls)))
        stubbed.discard("__init__")
        assert stubbed - actual == set(), f"{node.name}: stubbed but missing"
        assert actual - stubbed == set(), f"{node.name}: no stub"
