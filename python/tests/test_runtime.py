"""The scheduler from Python: accel.Runtime, accel.task, actors, placement groups, queues (python/README.md).

The ctest python.runtime runs this file on the sim backend's h100-sxm-8 node (ACCEL_BACKENDS=sim
ACCEL_SIM_PROFILE=h100-sxm-8): eight simulated H100s in one NVLink clique. The tests that need that node skip
elsewhere (python.pytest runs on the host backend); the others run on any backend.
"""
import gc
import threading
import time

import pytest

import accel

STATUS = accel.Status


@pytest.fixture
def rt():
    with accel.Runtime(workers=4) as runtime:
        yield runtime


@pytest.fixture
def node():
    """Skips unless the devices are the sim backend's h100-sxm-8 node."""
    devices = accel.devices()
    if len(devices) != 8 or any(d.backend != "sim" or "H100" not in d.name for d in devices):
        pytest.skip("needs ACCEL_BACKENDS=sim ACCEL_SIM_PROFILE=h100-sxm-8 (the ctest python.runtime)")
    return devices


def test_task_returns_its_value(rt):
    @accel.task
    def add(a, b, scale=1):
        return {"sum": (a + b) * scale, "items": [a, b]}

    assert add.remote(2, 3, scale=10).result() == {"sum": 50, "items": [2, 3]}
    assert rt.submit(add, 1, 1).result(timeout=60)["sum"] == 2  # the decorator's options, submitted by hand
    assert rt.submit(lambda: None).result() is None
    assert add(1, 2)["sum"] == 3  # a plain call still runs the function here
    counters = rt.counters()
    assert counters["submitted"] == 3 and counters["finished"] == 3 and counters["failed"] == 0


def test_the_event_log_records_each_decision(rt):
    assert rt.events() == []  # off until given a capacity
    rt.set_event_log(64)
    rt.submit(lambda: None, name="one").result()
    with pytest.raises(accel.TaskError):
        rt.submit(lambda: 1 / 0).result()
    events = rt.events()
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    kinds = [e["kind"] for e in events if "'one'" in e["name"]]
    assert kinds == ["submitted", "placed", "started", "finished"]
    (failed,) = [e for e in events if e["kind"] == "failed"]
    assert failed["status"].startswith("ACCEL_ERROR_") and failed["device"] is None
    assert rt.events(after=events[-1]["sequence"]) == []
    with pytest.raises(accel.AccelError, match="past the maximum"):
        rt.set_event_log(1 << 21)


def test_quarter_share_sees_its_memory_limit(rt, node):
    @accel.task(devices=1, share=0.25, selector="kind == gpu && mem >= 40GiB")
    def probe(ctx):
        device = ctx.devices[0]
        limit = ctx.memory_limit(0)
        small = accel.empty(1 << 20, "uint8", device=device)  # inside the share: allowed
        try:
            accel.empty(limit + (1 << 30), "uint8", device=device)
            refused = None
        except accel.AccelError as e:
            refused = e.status_name
        return device, limit, small.nbytes, refused, ctx.attempt

    device, limit, small, refused, attempt = probe.remote().result()
    assert isinstance(device, accel.Device) and device.backend == "sim"
    total = next(d["memory_total"] for d in rt.devices() if d["device"] == device)
    assert abs(limit - total // 4) <= 1 << 20, (limit, total)
    assert small == 1 << 20
    assert refused == "ACCEL_ERROR_RESOURCE_EXHAUSTED"
    assert attempt == 0


def test_dependencies_run_in_order(rt):
    order = []

    def step(name, delay=0.0):
        time.sleep(delay)
        order.append(name)
        return name

    first = rt.submit(step, "first", 0.2)
    second = rt.submit(step, "second", after=[first])
    third = rt.submit(step, "third", after=second)
    assert third.result() == "third"
    assert order == ["first", "second", "third"]

    # A Future passed as an argument is a dependency, replaced by its value.
    @accel.task
    def double(x):
        return 2 * x

    assert double.remote(double.remote(double.remote(1))).result() == 8


def test_python_exception_becomes_the_tasks_error(rt):
    @accel.task(name="explode")
    def boom(x):
        raise ValueError(f"boom {x}")

    f = boom.remote(42)
    with pytest.raises(accel.TaskError) as info:
        f.result()
    error = info.value
    assert isinstance(error, accel.AccelError)
    assert error.status == STATUS.ACCEL_ERROR_INTERNAL
    assert "explode raised ValueError: boom 42" in str(error)
    assert "test_runtime.py" in str(error) and "in boom" in str(error)
    assert isinstance(error.__cause__, ValueError) and str(error.__cause__) == "boom 42"
    assert f.message == str(error)
    assert f.done()

    # Its dependent never runs: FAILED_PRECONDITION naming the dependency.
    dependent = rt.submit(lambda: "ran", after=[f])
    with pytest.raises(accel.AccelError) as info:
        dependent.result()
    assert info.value.status == STATUS.ACCEL_ERROR_FAILED_PRECONDITION
    assert not isinstance(info.value, accel.TaskError)
    assert "explode" in str(info.value)

    # An AccelError raised in a task keeps its status; BaseExceptions do not escape the worker either.
    def not_found():
        accel.device(99)

    with pytest.raises(accel.TaskError) as info:
        rt.submit(not_found).result()
    assert info.value.status == STATUS.ACCEL_ERROR_NOT_FOUND
    with pytest.raises(accel.TaskError, match="KeyboardInterrupt"):
        rt.submit(lambda: (_ for _ in ()).throw(KeyboardInterrupt())).result()
    assert rt.counters()["failed"] == 4


def test_bad_selector_raises_with_its_column(rt):
    with pytest.raises(accel.SelectorError) as info:
        accel.check_selector("kind == gpu && mem >= )")
    assert isinstance(info.value, ValueError) and isinstance(info.value, accel.AccelError)
    assert info.value.status == STATUS.ACCEL_ERROR_INVALID_ARGUMENT
    assert info.value.column == 23
    assert "column 23" in str(info.value)
    accel.check_selector("kind == gpu && mem >= 40GiB")  # parses: no error

    # At submission, before anything runs; a bundle's selector names the bundle.
    with pytest.raises(accel.SelectorError) as info:
        rt.submit(lambda: 1, devices=1, selector="kind === gpu")
    assert info.value.column > 0 and "selector" in str(info.value)
    with pytest.raises(accel.SelectorError, match=r"bundles\[1\]\.selector"):
        rt.placement_group([{"devices": 1}, {"devices": 1, "selector": "mem >="}])
    assert rt.counters()["submitted"] == 0


def test_selector_no_device_matches_fails_at_submission(rt, node):
    with pytest.raises(accel.AccelError) as info:
        rt.submit(lambda: 1, devices=1, selector="kind == gpu && mem >= 1TiB")
    assert info.value.status == STATUS.ACCEL_ERROR_NOT_FOUND
    assert "mem" in str(info.value)
    with pytest.raises(accel.AccelError) as info:
        rt.submit(lambda: 1, devices=9)
    assert info.value.status in (STATUS.ACCEL_ERROR_RESOURCE_EXHAUSTED, STATUS.ACCEL_ERROR_NOT_FOUND)


def test_placement_group_of_eight_in_the_nvlink_clique(rt, node):
    bundles = [{"devices": 1, "share": 1.0, "selector": "kind == gpu"} for _ in range(8)]
    with rt.placement_group(bundles, strategy="STRICT_PACK", level="clique", name="gang") as pg:
        held = pg.devices()
        assert [d["rank"] for d in held] == list(range(8))
        assert sorted(d["bundle"] for d in held) == list(range(8))
        assert len({d["device"] for d in held}) == 8
        assert all(d["share"] == 1.0 and d["memory"] > 0 for d in held)
        assert all(d["share_free"] == 0.0 for d in rt.devices())

        # Tasks run inside a bundle, on its device; one outside waits and says why.
        in_bundle = rt.submit(lambda ctx: ctx.devices, placement_group=pg, bundle=3)
        assert in_bundle.result() == [next(d["device"] for d in held if d["bundle"] == 3)]
        outside = rt.submit(lambda: 1, devices=1)
        time.sleep(0.1)
        assert not outside.done() and "capacity" in outside.message
        with pytest.raises(accel.AccelError, match="past"):
            rt.submit(lambda: 1, placement_group=pg, bundle=8)

        # A second gang cannot be placed now: nothing is held, the message names the constraint.
        with pytest.raises(accel.AccelError) as info:
            rt.placement_group(bundles, strategy="STRICT_PACK")
        assert info.value.status == STATUS.ACCEL_ERROR_RESOURCE_EXHAUSTED
    assert pg.destroyed
    assert outside.result(timeout=60) == 1  # the group's devices are free again
    with pytest.raises(accel.AccelError, match="destroyed"):
        pg.devices()


def test_actor_keeps_state_across_calls_in_order(rt):
    @accel.actor(name="log")
    class Log:
        def __init__(self, ctx, prefix):
            self.prefix = prefix
            self.devices = len(ctx.devices)
            self.items = []

        def add(self, item):
            time.sleep(0.001 * (item % 3))  # calls still run one at a time, in order
            self.items.append(f"{self.prefix}{item}")
            return len(self.items)

        def snapshot(self, ctx):
            return list(self.items), ctx.attempt

    log = Log.remote("#")
    futures = [log.add.remote(i) for i in range(50)]
    assert [f.result() for f in futures] == list(range(1, 51))
    items, attempt = log.call("snapshot").result()
    assert items == [f"#{i}" for i in range(50)] and attempt == 0
    info = log.info()
    assert info["state"] == "ALIVE" and info["calls_done"] == 51 and info["calls_pending"] == 0
    assert log.name == "log" and log.message == ""
    with pytest.raises(AttributeError):
        log.no_such_method
    log.destroy()
    with pytest.raises(accel.AccelError, match="destroyed"):
        log.add.remote(1)
    assert rt.counters()["actors_created"] == 1


def test_a_waiting_placement_group_is_placed_once_the_room_frees(rt, node):
    """placement_group(..., wait=True): pending while the node is full, holding nothing; placed whole after."""
    full = rt.placement_group([{"devices": 1} for _ in range(8)], name="full")
    later = rt.placement_group([{"devices": 1} for _ in range(2)], name="later", wait=True)
    assert later.devices() == [] and later.message != "placed"
    assert later.wait(timeout=0.01) is False
    task = rt.submit(lambda ctx: ctx.devices, devices=1, placement_group=later, bundle=1)
    time.sleep(0.05)
    assert not task.done() and "not placed yet" in task.message
    full.destroy()
    assert later.wait(timeout=60) is True and later.message == "placed"
    held = later.devices()
    assert len(held) == 2
    assert task.result(timeout=60) == [next(d["device"] for d in held if d["bundle"] == 1)]
    later.destroy()


def test_actor_keeps_its_placement_group(rt, node):
    class Pinned:
        def __init__(self, ctx):
            self.device = ctx.devices[0]

        def where(self):
            return self.device

    # The bundle is busy, so the actor waits for it; then the actor holds the group's only reference: dropping the
    # Python handles must not destroy the group under the waiting actor.
    release = threading.Event()
    started = threading.Event()

    def occupy():
        started.set()
        return release.wait(30)

    pg = rt.placement_group([{"devices": 1}])
    busy = rt.submit(occupy, placement_group=pg, bundle=0)
    assert started.wait(30)
    pinned = rt.actor(Pinned, placement_group=pg, bundle=0)
    assert pinned.info()["state"] == "PENDING", pinned.message
    del pg, busy
    gc.collect()
    release.set()
    assert pinned.where.remote().result(timeout=float("inf")).backend == "sim"
    assert pinned.info()["state"] == "ALIVE", pinned.message
    pinned.destroy()


def test_actor_on_a_device_share_and_its_errors(rt, node):
    class Holder:
        def __init__(self, ctx):
            self.device = ctx.devices[0]
            self.limit = ctx.memory_limit(0)

        def where(self):
            return self.device, self.limit

        def fail(self):
            raise RuntimeError("call failed")

    with rt.actor(Holder, devices=1, share=0.5) as holder:
        device, limit = holder.where.remote().result()
        assert device.backend == "sim" and limit > 0
        with pytest.raises(accel.TaskError, match="call failed"):
            holder.fail.remote().result()
        assert holder.where.remote().result()[0] == device  # a call's error is that call's: the actor lives

    class Broken:
        def __init__(self):
            raise OSError("weights file missing")

        def use(self):
            return 1

    broken = rt.actor(Broken, name="broken")
    with pytest.raises(accel.AccelError) as info:
        broken.use.remote().result()  # accepted before init ran, or refused after the actor died
    assert "weights file missing" in str(info.value)
    deadline = time.monotonic() + 30
    while broken.info()["state"] != "DEAD" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert broken.info()["state"] == "DEAD" and "weights file missing" in broken.message


def test_cancellation(rt):
    release = threading.Event()
    started = threading.Event()

    def blocker():
        started.set()
        release.wait(30)
        return "blocked"

    first = rt.submit(blocker)
    waiting = rt.submit(lambda: "ran", after=[first])
    dependent = rt.submit(lambda: "ran", after=[waiting])
    waiting.cancel()
    for f in (waiting, dependent):
        with pytest.raises(accel.AccelError) as info:
            f.result(timeout=30)
        assert info.value.status == STATUS.ACCEL_ERROR_CANCELLED
        assert not isinstance(info.value, accel.TaskError)
    with pytest.raises(accel.AccelError) as info:
        first.result(timeout=0.05)  # still running: the timeout is the caller's
    assert info.value.status == STATUS.ACCEL_ERROR_TIMEOUT and "did not end within" in str(info.value)
    release.set()
    assert first.result() == "blocked"

    # A running task sees ctx.cancelled and decides.
    started.clear()

    def cooperative(ctx):
        started.set()
        deadline = time.monotonic() + 30
        while not ctx.cancelled and time.monotonic() < deadline:
            time.sleep(0.005)
        return "stopped" if ctx.cancelled else "timed out"

    running = rt.submit(cooperative)
    assert started.wait(30)
    running.cancel()
    assert running.result() == "stopped"


def test_cancel_a_task_waiting_for_capacity(rt, node):
    with rt.placement_group([{"devices": 8}]):
        pending = rt.submit(lambda: 1, devices=1, share=0.5)
        time.sleep(0.05)
        assert "capacity" in pending.message
        pending.cancel()
        with pytest.raises(accel.AccelError) as info:
            pending.result()
        assert info.value.status == STATUS.ACCEL_ERROR_CANCELLED


def test_two_hundred_small_tasks(rt):
    @accel.task
    def square(i):
        return i * i

    futures = [square.remote(i) for i in range(200)]
    assert sum(f.result() for f in futures) == sum(i * i for i in range(200))
    counters = rt.counters()
    assert counters["submitted"] == 200 and counters["finished"] == 200


def test_a_task_group_waits_for_all_and_raises_the_first_failure(rt):
    done = []
    lock = threading.Lock()

    def work(i):
        with lock:
            done.append(i)

    with rt.task_group("batch") as group:
        for i in range(300):
            group.submit(work, i)
    assert sorted(done) == list(range(300))  # leaving the block waited for all
    counters = rt.counters()
    assert counters["finished"] == 300 and counters["failed"] == 0

    group = rt.task_group("g")
    group.submit(work, 1000)
    group.submit(lambda: 1 / 0, name="divide")
    with pytest.raises(accel.TaskError, match=r"1 of the tasks of task group 'g' failed; the first: .*'divide'.*"
                                              r"ZeroDivisionError") as failure:
        group.wait()
    assert failure.value.status == STATUS.ACCEL_ERROR_INTERNAL
    assert group.wait() is True and group.done()  # reported once: the group is clear
    gate = threading.Event()
    group.submit(gate.wait)
    assert group.wait(timeout=0.01) is False and not group.done()
    gate.set()
    assert group.wait(timeout=60) is True
    group.cancel()
    group.submit(work, 2000)
    with pytest.raises(accel.TaskError, match="was cancelled") as cancelled:
        group.wait()
    assert cancelled.value.status == STATUS.ACCEL_ERROR_CANCELLED and 2000 not in done
    group.destroy()
    with pytest.raises(accel.AccelError, match="task group 'g' was destroyed"):
        group.submit(work, 3)


def test_a_task_group_left_by_an_exception_cancels_its_tasks(rt, node):
    ran = []
    started = threading.Event()
    stopped = []

    def hold(ctx):  # holds every device until the group is cancelled
        started.set()
        deadline = time.monotonic() + 60
        while not ctx.cancelled and time.monotonic() < deadline:
            time.sleep(0.001)
        stopped.append(ctx.cancelled)

    with pytest.raises(KeyError):
        with rt.task_group() as group:
            group.submit(hold, devices=8)
            assert started.wait(60)
            for i in range(3):
                group.submit(ran.append, i, devices=1)  # wait for a device
            raise KeyError("left early")
    assert ran == []  # cancelled while they waited
    assert stopped == [True]  # the running one saw the cancel, and the block waited for it


def test_tasks_overlap_where_they_release_the_gil(rt):
    # Four workers, four tasks sleeping 0.5 s each (sleeping releases the GIL): together well under 2 s.
    start = time.monotonic()
    assert [f.result() for f in [rt.submit(time.sleep, 0.5) for _ in range(4)]] == [None] * 4
    assert time.monotonic() - start < 1.5


def test_tasks_submit_tasks_and_see_their_runtime(rt):
    @accel.task
    def leaf(x):
        return x + 1

    @accel.task
    def parent(ctx, x):
        assert accel.current_runtime() is ctx.runtime
        return leaf.remote(x).result()

    assert parent.remote(1).result() == 2
    assert accel.current_runtime() is rt

    # The context is only valid during its call.
    kept = rt.submit(lambda ctx: ctx).result()
    with pytest.raises(accel.AccelError, match="after its task function returned"):
        kept.attempt


def test_queue_usage_counts_finished_tasks(rt, node):
    team = rt.queue("team", quota=2.0, limit=4.0, weight=2.0)
    futures = [rt.submit(lambda: 1, devices=1, share=0.5, queue=team) for _ in range(5)]
    assert sum(f.result() for f in futures) == 5
    usage = team.usage()
    assert usage["finished"] == 5
    assert set(usage) >= {"devices", "memory", "pending", "running", "preempted", "dominant_share", "over_quota"}
    # A queue with a child takes no work; a limit past which a request can never fit fails at submission.
    dept = rt.queue("dept")
    rt.queue("project", parent=dept)
    with pytest.raises(accel.AccelError):
        rt.submit(lambda: 1, devices=1, queue=dept).result()
    with pytest.raises(accel.AccelError, match="name"):
        rt.queue("")


def test_placement_group_counts_against_its_queue(rt, node):
    team = rt.queue("gangs", limit=4.0)
    group = rt.placement_group([{"devices": 1}] * 3, strategy="PACK", level="node", queue=team)
    assert team.usage()["devices"] == 3.0
    # Past the queue's limit: refused at once, nothing held.
    with pytest.raises(accel.AccelError, match="queue 'gangs' is at its limit"):
        rt.placement_group([{"devices": 1}] * 2, strategy="PACK", level="node", queue=team)
    assert team.usage()["devices"] == 3.0
    group.destroy()
    assert team.usage()["devices"] == 0.0


def test_queue_usage_without_devices(rt):
    q = rt.queue("cpu")
    assert sum(rt.submit(lambda: 1, queue=q).result() for _ in range(3)) == 3
    assert q.usage()["finished"] == 3
    q.destroy()
    with pytest.raises(accel.AccelError, match="destroyed"):
        q.usage()


def test_close_cancels_what_has_not_started():
    release = threading.Event()
    started = threading.Event()

    def blocker():
        started.set()
        return release.wait(30)

    rt = accel.Runtime(workers=2)
    running = rt.submit(blocker)
    later = rt.submit(lambda: "late", after=[running])
    assert started.wait(30)
    threading.Timer(0.2, release.set).start()
    rt.close()  # waits for the running task without holding the GIL
    assert rt.closed and running.result() is True
    with pytest.raises(accel.AccelError) as info:
        later.result()
    assert info.value.status == STATUS.ACCEL_ERROR_CANCELLED
    with pytest.raises(accel.AccelError, match="closed"):
        rt.submit(lambda: 1)
    rt.close()  # idempotent


def test_a_wait_runs_a_task_no_worker_started_on_the_waiting_thread():
    release = threading.Event()
    started = threading.Semaphore(0)

    def blocker():
        started.release()
        return release.wait(30)

    finalized = []

    @accel.actor
    class Slow:
        def __init__(self, ctx):
            pass

        def ping(self):
            return "pong"

        def __del__(self):
            time.sleep(0.3)
            finalized.append(threading.get_ident())

    seen = {}

    def waiter(rt):
        # Off the main thread, result() without a timeout is one C wait: with both workers held, only it can run
        # the task (docs/scheduler.md, "The direct path").
        seen["ran_on"] = rt.submit(threading.get_ident).result()
        seen["waiter"] = threading.get_ident()
        release.set()
        # The task ran here, yet this thread is no worker: a destroy on it still waits for the finalize.
        slow = Slow.remote()
        seen["ping"] = slow.ping.remote().result()
        slow.destroy()
        seen["finalized_before_destroy_returned"] = list(finalized)

    with accel.Runtime(workers=2) as rt:
        blockers = [rt.submit(blocker) for _ in range(2)]
        assert started.acquire(timeout=30) and started.acquire(timeout=30)
        thread = threading.Thread(target=waiter, args=(rt,))
        thread.start()
        thread.join(60)
        release.set()
        assert not thread.is_alive()
        assert [b.result(timeout=30) for b in blockers] == [True, True]
    assert seen["ran_on"] == seen["waiter"]
    assert seen["ping"] == "pong"
    assert len(seen["finalized_before_destroy_returned"]) == 1


def test_a_task_that_waits_on_a_nested_task_keeps_its_context():
    # With its one worker busy with `outer`, the wait runs `inner` on outer's thread; inner's end put the thread's
    # task context to None, and outer's accel.put then found no runtime.
    def inner():
        return threading.get_ident()

    def outer():
        ran_on = accel.current_runtime().submit(inner).result()
        ref = accel.put(b"still mine")
        return ran_on == threading.get_ident(), bytes(ref.get())

    rt = accel.Runtime(workers=1)  # no `with`: outside a task no runtime is current, only the task's context
    try:
        same_thread, data = rt.submit(outer).result(timeout=60)
    finally:
        rt.close()
    assert same_thread, "the nested task ran on another thread: this test shows nothing"
    assert data == b"still mine"


def test_no_current_runtime_outside_with():
    with pytest.raises(accel.AccelError) as info:
        accel.current_runtime()
    assert info.value.status == STATUS.ACCEL_ERROR_FAILED_PRECONDITION
    with pytest.raises(TypeError, match="unknown option"):
        accel.task(gpus=1)


def test_interpreter_exit_with_work_left(run_python):
    # Open runtimes are closed at exit (tasks not started cancelled, running ones awaited): no crash, no hang.
    out = run_python("""
        import time, accel
        rt = accel.Runtime(workers=2)
        fs = [rt.submit(time.sleep, 0.05) for _ in range(20)]
        print("submitted", len(fs))
    """)
    assert "submitted 20" in out


def test_every_wait_takes_one_timeout_rule(rt):
    """Future.result, TaskGroup.wait, PlacementGroup.wait and get: a negative timeout polls, infinity waits, NaN is
    refused with ValueError naming the call (python/src/common.h, timeout_ns)."""
    gate = threading.Event()
    blocked = rt.submit(gate.wait)
    with pytest.raises(accel.AccelError) as info:
        blocked.result(timeout=-1)  # polls: not done yet
    assert info.value.status == STATUS.ACCEL_ERROR_TIMEOUT
    group = rt.task_group("timeouts")
    group.submit(gate.wait)
    assert group.wait(timeout=-5) is False
    pg = rt.placement_group([{"devices": 1}], name="timeouts")
    assert pg.wait(timeout=60) is True
    assert pg.wait(timeout=-1) is True  # placed: a poll says so
    ref = rt.put(b"ready")
    assert ref.get(timeout=-1).tobytes() == b"ready"  # a negative timeout polls; the object is there
    calls = {"Future.result": blocked.result, "TaskGroup.wait": group.wait, "PlacementGroup.wait": pg.wait,
             "get": ref.get}
    for name, call in calls.items():
        with pytest.raises(ValueError, match=name + ": timeout is NaN"):
            call(timeout=float("nan"))
    gate.set()
    assert blocked.result(timeout=float("inf")) is True
    assert group.wait(timeout=float("inf")) is True
    group.destroy()
    pg.destroy()
