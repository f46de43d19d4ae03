"""`rdbscan load --jobs N`: several dumps at once, each parsed by a worker process into a
database of its own, then copied into the target database by the parent.

What it promises (and tests/test_cli_faults.py checks with real signals):
- a dump is copied as soon as its worker finishes (in one transaction: its key rows and its
  `dumps` row commit together or not at all), so Ctrl-C keeps every dump finished before it;
- Ctrl-C ends the load at once: workers ignore SIGINT (the terminal sends it to the whole
  process group) and the parent kills them;
- workers die with the parent, also after kill -9 (Linux: PR_SET_PDEATHSIG; elsewhere a
  thread that watches the parent's sentinel);
- the parts directory (`.rdbscan-parts-<pid>-*` beside the database) is removed at the end, and
  one left behind by a killed load is removed by the next load into the same directory.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import sys
import tempfile
import threading

from .store import Store

# Tables a worker's database holds for its dump, copied into the target database in this order.
PART_TABLES = ("key_rows", "streams", "stream_groups", "db_sizes", "slot_info", "dumps")
PARTS_PREFIX = ".rdbscan-parts-"


def sql_string(text: str) -> str:
    """`text` as an SQL string literal (a path with an apostrophe stays one literal)."""
    return "'" + text.replace("'", "''") + "'"


def load_parallel(
    paths: list[str],
    db_path: str,
    *,
    jobs: int,
    existing: str,
    snapshot_sizes: list[int] | None = None,
    **options,
) -> list:
    """Load `paths` into `db_path` with up to `jobs` worker processes; dump_ids follow the
    order of `paths` as in a sequential load.  Returns one DumpResult per path.  A dump the
    database already holds (or named twice) is settled when its part is copied (`existing` as
    in rdbscan.db.load.load)."""
    from .identity import file_fingerprint
    from .load import already_loaded, snapshot_ids

    store = Store(db_path)
    first = store.allocate_dump_ids(len(paths))
    ids = snapshot_ids(first, len(paths), snapshot_sizes)  # docs/diff.md
    where = os.path.dirname(os.path.abspath(db_path))
    remove_stale_parts(where)
    work = tempfile.mkdtemp(prefix=f"{PARTS_PREFIX}{os.getpid()}-", dir=where)
    try:
        results: list = [None] * len(paths)
        # A file named twice is loaded once, by its first mention, whichever finishes first (its
        # dump_id then follows the order of `paths`, as in a sequential load).
        twins: dict[int, list[int]] = {}
        first_of: dict[str, int] = {}
        todo = []
        for i, path in enumerate(paths):
            same_file = file_fingerprint(path)
            if same_file is not None and same_file in first_of:
                twins.setdefault(first_of[same_file], []).append(i)
                continue
            if same_file is not None:
                first_of[same_file] = i
            todo.append(i)

        def task(i: int) -> tuple:
            return (
                paths[i],
                os.path.join(work, f"part{i}.duckdb"),
                first + i,
                {**options, "snapshot_id": ids[i]},
            )

        def finished(i: int, result) -> None:
            results[i] = result
            part = os.path.join(work, f"part{i}.duckdb")
            fp = result.fingerprint
            same = store.find_dump(fp) if fp else None
            if same is not None and existing != "replace":
                results[i] = already_loaded(store, same, paths[i], fp, existing)
                os.remove(part)
            else:
                _merge(store, part, replaces=[same["dump_id"]] if same is not None else [])
            for k in twins.pop(i, []):  # the same file named again: settled as a sequential
                loaded = store.find_dump(fp) if fp else None  # load would settle it
                if loaded is not None and existing != "replace":
                    results[k] = already_loaded(store, loaded, paths[k], fp, existing)
                else:
                    todo.append(k)

        _pool(jobs, todo, task, finished, paths)
    finally:
        store.close()
        shutil.rmtree(work, ignore_errors=True)
    return results


def load_each(pairs: list[tuple[str, str]], *, jobs: int, **options) -> list:
    """Load each (dump, database) pair into a database of its own that does not exist yet (the
    dump gets id 1), up to `jobs` at once in worker processes: nothing is copied, as `diff` of
    two dumps wants it (one database per side).  Returns one DumpResult per pair."""
    results: list = [None] * len(pairs)

    def task(i: int) -> tuple:
        return (pairs[i][0], pairs[i][1], 1, {**options, "snapshot_id": 1})

    def finished(i: int, result) -> None:
        results[i] = result

    _pool(jobs, list(range(len(pairs))), task, finished, [p for p, _ in pairs])
    return results


def _pool(jobs: int, todo: list[int], task, finished, paths: list[str]) -> None:
    """Run the tasks numbered in `todo` on up to `jobs` worker processes: task(i) is what a
    worker is sent, finished(i, DumpResult) is called as each ends (and may add to `todo`).
    Ctrl-C or an error kills the workers still loading."""
    workers: list[_Worker] = []
    busy: dict = {}
    try:
        ctx = multiprocessing.get_context("spawn")  # no fork: DuckDB and the writer thread
        workers = [_Worker(ctx) for _ in range(min(jobs, len(todo)))]
        idle = list(workers)
        while todo or busy:
            while idle and todo:
                w, i = idle.pop(), todo.pop(0)
                w.conn.send(task(i))
                busy[w.conn] = (w, i)
            for conn in multiprocessing.connection.wait(list(busy)):
                w, i = busy.pop(conn)
                finished(i, w.result(paths[i]))
                idle.append(w)
    finally:
        for w, _ in busy.values():  # Ctrl-C or an error: what is still loading is dropped
            w.process.kill()
        for w in workers:
            w.stop()


def _merge(store: Store, part: str, replaces: list[int]) -> None:
    """Copy one finished dump into the target database: all its tables in one transaction,
    which also removes the dumps it replaces (--replace)."""
    store.run(f"ATTACH {sql_string(part)} AS rdbscan_part (READ_ONLY)")
    try:
        store.run("BEGIN TRANSACTION")
        try:
            for dump_id in replaces:
                store._delete(dump_id)
            for table in PART_TABLES:
                store.run(f"INSERT INTO main.{table} BY NAME SELECT * FROM rdbscan_part.{table}")
            store.run("COMMIT")
        except BaseException:
            store.run("ROLLBACK")
            raise
    finally:
        store.run("DETACH rdbscan_part")
    os.remove(part)


def remove_stale_parts(directory: str) -> None:
    """Remove the parts directories of loads whose process is gone (killed with -9)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not name.startswith(PARTS_PREFIX):
            continue
        pid = name[len(PARTS_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(directory, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, another user's
        return True
    return True


class _Worker:
    """One worker process and the pipe it takes dumps from and answers on."""

    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(
            target=_worker_main, args=(child, os.getpid()), name="rdbscan-load-worker", daemon=True
        )
        # Blocked while the worker starts, so that it inherits the mask: a Ctrl-C before it
        # ignores SIGINT must not print its KeyboardInterrupt (the parent gets it when unblocked)
        block = hasattr(signal, "pthread_sigmask")
        if block:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.process.start()
        finally:
            if block:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        child.close()

    def result(self, path: str):
        """The DumpResult of the dump just loaded; an exception the worker raised is raised
        here (a full disk, a bug)."""
        try:
            kind, value = self.conn.recv()
        except EOFError:
            self.process.join(5)
            raise RuntimeError(
                f"{path}: the worker process loading it ended unexpectedly "
                f"(exit code {self.process.exitcode})"
            ) from None
        if kind == "error":
            raise value
        return value

    def stop(self) -> None:
        """Ask an idle worker to leave; kill one still loading (Ctrl-C, an error elsewhere)."""
        if self.process.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.process.join(0.5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def _worker_main(conn, parent: int) -> None:
    """A worker process: load the dumps the parent sends, one at a time, each into its own
    database; answer ("ok", DumpResult) or ("error", exception)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C ends
    _die_with_parent(parent)
    from .load import load_one

    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        path, part_db, dump_id, options = task
        try:
            store = Store(part_db)
            try:
                # (a dump the target database holds is settled by the parent)
                result = load_one(store, path, dump_id=dump_id, existing="replace", **options)
            finally:
                store.close()
            result.for_another_process()
            conn.send(("ok", result))
        except BaseException as e:
            try:
                conn.send(("error", e))
            except Exception:  # not picklable: its text
                conn.send(("error", RuntimeError(f"{type(e).__name__}: {e}")))


def _die_with_parent(parent: int) -> None:
    """End this process when the parent ends, however it ends (kill -9 included)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0:
                if os.getppid() != parent:  # the parent was gone before prctl
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass
    process = multiprocessing.parent_process()
    assert process is not None  # a worker process
    sentinel = process.sentinel

    def watch():
        multiprocessing.connection.wait([sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="rdbscan-parent-watch", daemon=True).start()
