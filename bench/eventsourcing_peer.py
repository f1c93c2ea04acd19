"""The peer the append and rebuild figures are compared with: the Python
`eventsourcing` library on SQLite, without signing or encryption.

The workload is famctl's own in `famctl bench`, read from the file it
writes before timing anything: the records it appends (the same seed,
other ids), one record body per line, as famctl encodes them (JSON: `record`,
`store`, `focus`, `at`, `fields`). A record's first body is a `Created`
carrying its store, focus, time and fields; each later body of the same
record an `Updated` with the fields it changes, as famctl's later puts.
Events are saved 1 000 to a transaction (famctl appends in batches of
1 000, each one transaction; a record may span two, on both sides). Like
famctl's bench, each batch is made before its timing starts (the
aggregates and their pending events), so the append figure covers storing
only.

Two replays, each over every record:
  - `repository.get` of each aggregate: the library's replay, the figure the
    product brief quotes for it (aggregates per second);
  - reading the notification log in order (`recorder.select_notifications`,
    1 000 at a time) and folding every event into its aggregate in memory:
    the library's fastest way to rebuild all state, and the nearest to
    famctl's rebuild, a pass over the log in order.

Usage: python eventsourcing_peer.py WORKLOAD.jsonl
  ->  prints JSON {events, events_per_aggregate, batch, append_eps,
                   replay_aggregates_ps, replay_eps, scan_eps}
"""
import json, os, sys, tempfile, time

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event


class Record(Aggregate):
    @event("Created")
    def __init__(self, store: str, focus: str, at: str, fields: dict):
        self.store = store
        self.focus = focus
        self.at = at
        self.fields = dict(fields)

    @event("Updated")
    def update(self, fields: dict):
        self.fields.update(fields)


class Records(Application):
    pass


BATCH = 1000


def batches(path):
    """The workload's bodies, 1 000 at a time."""
    with open(path, encoding="utf-8") as f:
        batch = []
        for line in f:
            batch.append(json.loads(line))
            if len(batch) == BATCH:
                yield batch
                batch = []
        if batch:
            yield batch


def main():
    path = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        os.environ["PERSISTENCE_MODULE"] = "eventsourcing.sqlite"
        os.environ["SQLITE_DBNAME"] = os.path.join(d, "es.sqlite")
        # The library's aggregate cache stays off (its default: unset), so
        # that every `repository.get` reads SQLite. ("0" would turn on an
        # unbounded cache, filled by every save.)
        os.environ.pop("AGGREGATE_CACHE_MAXSIZE", None)
        app = Records()
        ids = []
        n = 0
        append = 0.0
        # A record's bodies follow one another in the workload.
        key, record = None, None
        for bodies in batches(path):
            # Made outside the timing, as famctl's bench makes its bodies.
            pending = {}
            for body in bodies:
                if body["record"] != key:
                    key = body["record"]
                    record = Record(store=body["store"], focus=body["focus"], at=body.get("at"), fields=body["fields"])
                    ids.append(record.id)
                else:
                    record.update(body["fields"])
                pending[record.id] = record
            n += len(bodies)
            t0 = time.perf_counter()
            app.save(*pending.values())
            append += time.perf_counter() - t0
        per = n / len(ids)

        t0 = time.perf_counter()
        for i in ids:
            app.repository.get(i)
        replay = time.perf_counter() - t0

        t0 = time.perf_counter()
        states = {}
        folded = 0
        position = 1
        while True:
            notifications = app.recorder.select_notifications(position, BATCH)
            if not notifications:
                break
            for notification in notifications:
                e = app.mapper.to_domain_event(notification)
                states[e.originator_id] = e.mutate(states.get(e.originator_id))
                folded += 1
            position = notifications[-1].id + 1
        scan = time.perf_counter() - t0
        assert folded == n and len(states) == len(ids), (folded, n, len(states), len(ids))

        print(json.dumps({"events": n, "events_per_aggregate": per, "batch": BATCH,
                          "append_eps": n / append,
                          "replay_aggregates_ps": len(ids) / replay, "replay_eps": n / replay,
                          "scan_eps": n / scan}))


if __name__ == "__main__":
    main()
