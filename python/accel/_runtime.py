"""The scheduler from Python: tasks, actors, placement groups and queues (python/README.md, "Scheduling").

accel._accel (python/src/runtime.cc) wraps libaccel-runtime's C API: Runtime, Future, TaskContext,
PlacementGroup, Queue. This module adds what a Ray user expects on top: the @accel.task and @accel.actor
decorators with .remote(), the current runtime (the innermost open `with accel.Runtime()`, or inside a task
its own runtime), Futures passed as arguments becoming dependencies, and actor handles whose methods are
called with handle.method.remote(...).

One rule for the task context: a task function, or an actor's __init__ or method, receives the TaskContext
as its first argument (after self) when that parameter is named `ctx`; otherwise it is called with its own
arguments only.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
import traceback

from . import _accel
from ._accel import Future, Runtime, TaskGroup

_local = threading.local()  # .ctx: the TaskContext of the task running on this thread, if any
_entered: list = []  # runtimes inside `with`, innermost last; process-wide, so tasks see them too
_entered_lock = threading.Lock()

_REQUEST = ("devices", "share", "memory", "selector", "placement_group", "bundle")
_TASK_OPTIONS = frozenset(_REQUEST + ("name", "after", "max_retries", "queue", "priority", "preemptible", "near"))
_ACTOR_OPTIONS = frozenset(_REQUEST + ("name", "max_restarts", "queue", "priority"))
_CALL_OPTIONS = frozenset(("name", "after", "max_retries"))

_FAILED_PRECONDITION = -8


def _error(status: int, message: str) -> Exception:
    e = _accel.AccelError(message)
    e.status = status
    e.status_name = _accel.status_name(status)
    return e


def _check_options(options, allowed, what):
    unknown = set(options) - allowed
    if unknown:
        raise TypeError(f"{what}: unknown option(s) {', '.join(sorted(unknown))}; "
                        f"the options are {', '.join(sorted(allowed))}")


def _wants_ctx(function, method=False) -> bool:
    """Whether `function`'s first parameter (after self when `method`) is named ctx."""
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return False
    if method:
        params = params[1:]
    return bool(params) and params[0].name == "ctx" and params[0].kind in (
        inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _method_wants_ctx(cls, name) -> bool:
    static = inspect.getattr_static(cls, name, None)
    if isinstance(static, staticmethod):
        return _wants_ctx(static.__func__)
    if isinstance(static, classmethod):
        return _wants_ctx(static.__func__, method=True)
    return _wants_ctx(getattr(cls, name), method=True)


def _dependencies(after, args, kwargs):
    """`after` (a Future or an iterable of them) plus the Futures among the arguments."""
    deps = [after] if isinstance(after, Future) else list(after or ())
    deps += [v for v in args if isinstance(v, Future)]
    deps += [v for v in kwargs.values() if isinstance(v, Future)]
    return deps


def _resolved(args, kwargs):
    """The arguments with each Future replaced by its value (it has ended: it was a dependency)."""
    return (tuple(v.result() if isinstance(v, Future) else v for v in args),
            {k: v.result() if isinstance(v, Future) else v for k, v in kwargs.items()})


def _error_message(name, exc, tb) -> str:
    """A failed task's message: its name, the exception, and where it was raised (runtime.cc calls it)."""
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    frames = traceback.extract_tb(tb) if tb is not None else []
    if frames:
        last = frames[-1]
        text += f" (at {os.path.basename(last.filename)}:{last.lineno} in {last.name})"
    return f"{name} raised {text}"


def current_runtime() -> Runtime:
    """Inside a task: its runtime. Elsewhere: the innermost open `with accel.Runtime()` block's runtime."""
    ctx = getattr(_local, "ctx", None)
    if ctx is not None:
        rt = ctx.runtime
        if rt is not None:
            return rt
    with _entered_lock:
        for rt in reversed(_entered):
            if not rt.closed:
                return rt
    raise _error(_FAILED_PRECONDITION,
                 "no accel.Runtime is open: use `with accel.Runtime() as rt:` (or rt.submit, rt.actor)")


def put(data, *, name=None):
    """Puts a copy of `data` (bytes, a C-contiguous buffer-protocol object such as a numpy array, or an accel.Array)
    into the current runtime's object store; an accel.ObjectRef (docs/objectstore.md)."""
    return current_runtime().put(data, name=name)


def get(ref, device=None, *, timeout=None):
    """ref.get(device, timeout=timeout): a read-only view of the object, on the host (device None: an
    accel.ObjectView, zero-copy) or on a runtime device index (a read-only accel.Array over the replica there)."""
    return ref.get(device, timeout=timeout)


def _run(ctx, function, args, kwargs, wants_ctx):
    # A task that waits on a Future may run the awaited task on its own thread: the inner one's context is set
    # for it and the outer one's put back after (it was cleared, and the outer task lost its runtime).
    outer = getattr(_local, "ctx", None)
    _local.ctx = ctx
    try:
        args, kwargs = _resolved(args, kwargs)
        return function(ctx, *args, **kwargs) if wants_ctx else function(*args, **kwargs)
    finally:
        _local.ctx = outer


def _submit(rt, function, args, kwargs, options, wants_ctx=None) -> Future:
    _check_options(options, _TASK_OPTIONS, "task")
    if wants_ctx is None:
        wants_ctx = _wants_ctx(function)
    name = options.get("name") or getattr(function, "__qualname__", None) or repr(function)
    deps = _dependencies(options.get("after"), args, kwargs)
    return rt._submit(functools.partial(_run, function=function, args=args, kwargs=kwargs, wants_ctx=wants_ctx),
                      name, options.get("devices", 0), options.get("share"), options.get("memory", 0),
                      options.get("selector"), options.get("placement_group"), options.get("bundle", 0), deps,
                      options.get("max_retries", 0), options.get("queue"), options.get("priority", 0),
                      bool(options.get("preemptible", False)), list(options.get("near", ())))


class RemoteFunction:
    """A function made a task by @accel.task: f.remote(*args, **kwargs) submits it to the current runtime.

    Calling f(...) directly runs the plain function on this thread."""

    def __init__(self, function, options):
        _check_options(options, _TASK_OPTIONS, "accel.task")
        functools.update_wrapper(self, function)
        self._function = function
        self._options = dict(options)
        self._wants_ctx = _wants_ctx(function)

    def remote(self, *args, **kwargs) -> Future:
        """Submits the task to accel.current_runtime(); Futures among the arguments are dependencies."""
        return _submit(current_runtime(), self._function, args, kwargs, self._options, self._wants_ctx)

    def options(self, **options) -> RemoteFunction:
        """A copy with these options replacing the decorator's."""
        return RemoteFunction(self._function, {**self._options, **options})

    def __call__(self, *args, **kwargs):
        return self._function(*args, **kwargs)

    def __repr__(self):
        return f"<accel.RemoteFunction {self._function.__qualname__}>"


def task(function=None, /, **options):
    """@accel.task or @accel.task(devices=1, share=0.25, selector="kind == gpu", ...): a RemoteFunction."""
    _check_options(options, _TASK_OPTIONS, "accel.task")
    if function is not None:
        return RemoteFunction(function, options)
    return lambda f: RemoteFunction(f, options)


def _runtime_submit(self, function, /, *args, **options) -> Future:
    """Submits function(*args) as a task; options as for accel.task (a RemoteFunction's are the defaults)."""
    if isinstance(function, RemoteFunction):
        return _submit(self, function._function, args, {}, {**function._options, **options}, function._wants_ctx)
    return _submit(self, function, args, {}, options)


def _group_submit(self, function, /, *args, **options) -> None:
    """Submits function(*args) into the task group: as Runtime.submit, without a Future (group.wait() reports
    the first failure)."""
    _runtime_submit(self, function, *args, **options)  # the group's _submit returns no Future


def _runtime_enter(self):
    with _entered_lock:
        _entered.append(self)
    return self


def _runtime_exit(self, *exc_info):
    with _entered_lock:
        for i in range(len(_entered) - 1, -1, -1):
            if _entered[i] is self:
                del _entered[i]
                break
    self.close()
    return False


def placement_group(bundles, strategy="PACK", level="clique", required=True, name=None, queue=None, wait=False):
    """accel.current_runtime().placement_group(...)."""
    return current_runtime().placement_group(bundles, strategy, level, required, name, queue, wait)


# ---- actors -------------------------------------------------------------------


def _make_instance(ctx, cls, args, kwargs, wants_ctx):
    return _run(ctx, cls, args, kwargs, wants_ctx)


def _call_method(ctx, method, args, kwargs, wants_ctx):
    return _run(ctx, getattr(ctx._actor, method), args, kwargs, wants_ctx)


def _create_actor(rt, cls, args, kwargs, options) -> ActorHandle:
    _check_options(options, _ACTOR_OPTIONS, "actor")
    name = options.get("name") or cls.__qualname__
    factory = functools.partial(_make_instance, cls=cls, args=args, kwargs=kwargs,
                                wants_ctx=_wants_ctx(cls.__init__, method=True))
    core = rt._actor(factory, name, options.get("devices", 0), options.get("share"), options.get("memory", 0),
                     options.get("selector"), options.get("placement_group"), options.get("bundle", 0),
                     options.get("max_restarts", 0), options.get("queue"), options.get("priority", 0))
    return ActorHandle(core, cls)


class ActorClass:
    """A class made an actor by @accel.actor: C.remote(*args, **kwargs) creates one in the current runtime."""

    def __init__(self, cls, options):
        _check_options(options, _ACTOR_OPTIONS, "accel.actor")
        functools.update_wrapper(self, cls, updated=())
        self._cls = cls
        self._options = dict(options)

    def remote(self, *args, **kwargs) -> ActorHandle:
        """Creates the actor; the instance is made by cls(*args, **kwargs) on its reservation."""
        return _create_actor(current_runtime(), self._cls, args, kwargs, self._options)

    def options(self, **options) -> ActorClass:
        return ActorClass(self._cls, {**self._options, **options})

    def __repr__(self):
        return f"<accel.ActorClass {self._cls.__qualname__}>"


def actor(cls=None, /, **options):
    """@accel.actor or @accel.actor(devices=1, share=0.5, ...) on a class: an ActorClass."""
    _check_options(options, _ACTOR_OPTIONS, "accel.actor")
    if cls is not None:
        return ActorClass(cls, options)
    return lambda c: ActorClass(c, options)


def _runtime_actor(self, cls, /, *args, **options) -> ActorHandle:
    """Creates an actor of `cls` (a class or an ActorClass, whose options are the defaults) with cls(*args)."""
    if isinstance(cls, ActorClass):
        return _create_actor(self, cls._cls, args, {}, {**cls._options, **options})
    return _create_actor(self, cls, args, {}, options)


class ActorMethod:
    """handle.method: .remote(*args, **kwargs) queues a call; .options(after=, max_retries=, name=)."""

    def __init__(self, handle, method, options=None):
        self._handle = handle
        self._method = method
        self._options = dict(options or {})

    def remote(self, *args, **kwargs) -> Future:
        """Queues the call; calls run one at a time, in the order made."""
        options = self._options
        handle = self._handle
        wants = handle._wants.get(self._method)
        if wants is None:
            wants = handle._wants[self._method] = _method_wants_ctx(handle._class, self._method)
        runner = functools.partial(_call_method, method=self._method, args=args, kwargs=kwargs, wants_ctx=wants)
        name = options.get("name") or f"{handle._core.name}.{self._method}"
        return handle._core.call(runner, name, _dependencies(options.get("after"), args, kwargs),
                                 options.get("max_retries", 0))

    def options(self, **options) -> ActorMethod:
        _check_options(options, _CALL_OPTIONS, "actor call")
        return ActorMethod(self._handle, self._method, {**self._options, **options})

    def __repr__(self):
        return f"<accel.ActorMethod {self._handle._class.__qualname__}.{self._method}>"


class ActorHandle:
    """An actor: handle.method.remote(...) or handle.call("method", ...) return Futures; calls run in order.

    The actor is destroyed by destroy(), at the end of a `with` block, or when the handle and every Future of
    its calls are gone."""

    def __init__(self, core, cls):
        self._core = core
        self._class = cls
        self._wants = {}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        attribute = getattr(self._class, name, None)
        if not callable(attribute):
            raise AttributeError(f"actor class {self._class.__qualname__} has no method {name!r}")
        return ActorMethod(self, name)

    def call(self, method, /, *args, **kwargs) -> Future:
        """handle.call("m", *args, **kwargs) is handle.m.remote(*args, **kwargs)."""
        if not callable(getattr(self._class, method, None)):
            raise AttributeError(f"actor class {self._class.__qualname__} has no method {method!r}")
        return ActorMethod(self, method).remote(*args, **kwargs)

    def info(self) -> dict:
        """state ("PENDING", "ALIVE", "RESTARTING", "DEAD"), restarts, calls_pending, calls_done."""
        return self._core.info()

    @property
    def message(self) -> str:
        """Why the actor is DEAD or PENDING; "" otherwise."""
        return self._core.message

    @property
    def name(self) -> str:
        return self._core.name

    def destroy(self) -> None:
        """Cancels the calls not started, lets the running one end, drops the instance (finalize) and frees the
        reservation; returns once that is done (from inside a task: at once)."""
        self._core.destroy()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.destroy()
        return False

    def __repr__(self):
        state = "destroyed" if self._core.destroyed else self._core.info()["state"]
        return f"<accel.ActorHandle {self._class.__qualname__} '{self._core.name}' {state}>"


Runtime.submit = _runtime_submit
TaskGroup.submit = _group_submit
Runtime.actor = _runtime_actor
Runtime.__enter__ = _runtime_enter
Runtime.__exit__ = _runtime_exit
