"""The per-process memos: bounded, and their lock-free reads safe beside writes in threads."""

import sys
import threading

from service.memo import Memo, Recent


def test_a_memo_drops_its_oldest_and_a_recent_its_least_recently_read():
    memo, recent = Memo(2), Recent(2)
    for store in (memo, recent):
        store.put("a", 1)
        store.put("b", 2)
    assert memo.get("a") == 1 and recent.get("a") == 1  # the read makes "a" recent
    memo.put("c", 3)
    recent.put("c", 3)
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == (None, 2, 3)
    assert (recent.get("a"), recent.get("b"), recent.get("c")) == (1, None, 3)


def test_reads_beside_writes_and_evictions_in_threads_never_fail():
    recent, memo = Recent(8), Memo(8)
    keys = [f"g{i}" for i in range(32)]
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader():
        try:
            while not stop.is_set():
                for k in keys:
                    for store in (recent, memo):
                        value = store.get(k)
                        assert value is None or value == k
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def writer():
        try:
            for _ in range(4000):
                for k in keys:
                    recent.put(k, k)
                    memo.put(k, k)
                    recent.discard(k)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        threads = [threading.Thread(target=reader) for _ in range(3)]
        for t in threads:
            t.start()
        writers = [threading.Thread(target=writer) for _ in range(2)]
        for t in writers:
            t.start()
        for t in writers:
            t.join()
        stop.set()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []
    assert len(recent._data) <= 8 and len(memo._data) <= 8
