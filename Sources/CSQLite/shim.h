#ifndef FAMCTL_CSQLITE_SHIM_H
#define FAMCTL_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import; these wrappers fix it once.
static inline int famctl_sqlite3_bind_text_transient(sqlite3_stmt *stmt, int index, const char *text, int count) {
    return sqlite3_bind_text(stmt, index, text, count, SQLITE_TRANSIENT);
}

/// SQLITE_STATIC likewise: for values that outlive the step that reads them.
static inline int famctl_sqlite3_bind_blob_static(sqlite3_stmt *stmt, int index, const void *bytes, int count) {
    return sqlite3_bind_blob(stmt, index, bytes, count, SQLITE_STATIC);
}

static inline int famctl_sqlite3_bind_text_static(sqlite3_stmt *stmt, int index, const char *text, int count) {
    return sqlite3_bind_text(stmt, index, text, count, SQLITE_STATIC);
}

/// sqlite3_config is variadic: turns off the library's memory statistics,
/// whose global mutex every allocation took. Must run before the library
/// initialises (the first open); later it is refused, harmlessly.
static inline int famctl_sqlite3_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/// sqlite3_config likewise: a statement journal (what one statement of a
/// transaction must undo if it fails halfway) stays in memory up to `bytes`
/// before it spills to a temporary file. Must run before the first open.
static inline int famctl_sqlite3_statement_journal_spill(int bytes) {
    return sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes);
}

/// sqlite3_db_config is variadic; this is the one call we make of it.
static inline int famctl_sqlite3_enable_defensive(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
}
/// What a connection does when another process holds the lock it needs (a
/// rebuild or an import holds the write lock for seconds at a million
/// events): it waits, 10 ms at a time, up to `arg` tries; after the first
/// second it says on stderr what it waits for (once a process), so that a command held
/// up looks held up, not hung. Stateless (SQLite counts the tries of each
/// wait), so one handler serves every connection and thread.
#include <stdio.h>
#include <stdint.h>
#include <unistd.h>
#include <signal.h>
/// Set (by a signal's handler: a `sync --watch` stopped with Ctrl-C) to end
/// every wait at once: the statement then fails as busy.
static volatile sig_atomic_t famctl_sqlite3_busy_cancelled = 0;

static inline void famctl_sqlite3_cancel_busy_waits(void) { famctl_sqlite3_busy_cancelled = 1; }

static int famctl_sqlite3_busy_wait(void *arg, int count) {
    if (count >= (int)(intptr_t)arg || famctl_sqlite3_busy_cancelled) return 0;
    static volatile sig_atomic_t noted = 0;
    if (count == 100 && !noted) {
        noted = 1;
        fputs("famctl: waiting for another famctl process to finish with this home's database (a rebuild, an import or a sync writing)\n", stderr);
    }
    usleep(10000);
    return 1;
}

static inline int famctl_sqlite3_wait_when_busy(sqlite3 *db, int seconds) {
    return sqlite3_busy_handler(db, famctl_sqlite3_busy_wait, (void *)(intptr_t)(seconds * 100));
}

#endif
