"""accel.ray.remote's options, without Ray: a stand-in for ray.remote records what each decorated target got."""
import accel.ray.worker as worker


class FakeRay:
    def __init__(self):
        self.calls = []

    def remote(self, **options):
        self.calls.append(options)
        return lambda target: target


def test_one_decorator_gives_every_target_the_same_options(monkeypatch):
    # The decorator's options were popped from its own dict: the second target lost `resources`, and a class got
    # the tasks' max_calls, which Ray refuses for actors.
    fake = FakeRay()
    monkeypatch.setattr(worker, "_ray", lambda: fake)
    decorate = worker.remote(accelerators=0.5, resources={"ssd": 1}, num_cpus=2)

    def first():
        return 1

    def second():
        return 2

    class Actor:
        pass

    decorate(first)
    decorate(second)
    decorate(Actor)
    task_options = {"resources": {"ssd": 1, "accel_gpu": 0.5}, "num_cpus": 2, "max_calls": 1}
    assert fake.calls[0] == task_options
    assert fake.calls[1] == task_options
    assert fake.calls[2] == {"resources": {"ssd": 1, "accel_gpu": 0.5}, "num_cpus": 2}
