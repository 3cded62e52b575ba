/* tlrt: a tensor runtime's memory manager in C, by the TensorLogic
 * strategy (seed 000): reference counts and a stack of scopes of records,
 * structs whose fields are released when they die, named parameters, the
 * zero-sized type as NULL, and stale records purged when malloc hands an
 * address out again. Objects live in glibc's malloc.
 *
 * Every call reports what it did through the emit callback, as the events
 * of tlcheck's trace format (traces/FORMAT.md, layer 2, with effects: the
 * call itself, then each free it made). A call the runtime finds misused
 * is still reported, then refused: it returns the runtime's message and
 * does nothing else (see tl_error).
 *
 * Faults from the catalog's history can be switched on (tl_parse_faults);
 * none is on by default. */
#ifndef TLRT_H
#define TLRT_H

#include <stddef.h>
#include <stdint.h>

/* One event, as the trace format writes it. */
typedef struct {
    const char *op;     /* "alloc", "release", "free", ... */
    void *addr;         /* the object, or NULL */
    uint64_t size;      /* alloc, struct_init */
    const char *name;   /* param_register, param_release; else NULL */
    void *const *fields; /* struct_init */
    int nfields;
} tl_event;

typedef void (*tl_emit)(void *ctx, const tl_event *ev);

typedef struct tl_runtime tl_runtime;

/* The faults, one bit each; tl_fault_names lists their catalog names. */
enum {
    TL_STALE_RECORD_NOT_PURGED = 1 << 0,
    TL_UNREGISTER_RELEASES = 1 << 1,
    TL_UNREGISTER_OLDEST_RECORD = 1 << 2,
    TL_STRUCT_INIT_NO_ACQUIRE = 1 << 3,
    TL_STRUCT_DEATH_NO_FIELD_RELEASE = 1 << 4,
    TL_PARAM_REGISTER_NO_ACQUIRE = 1 << 5,
    TL_PARAM_REREGISTER_NO_RELEASE_OLD = 1 << 6,
    TL_RELEASE_IGNORES_ZERO = 1 << 7,
    TL_ZST_ALLOCATES = 1 << 8,
    TL_SCOPE_EXIT_OLDEST_FIRST = 1 << 9,
    TL_U8_COUNT = 1 << 10,
};
extern const char *const tl_fault_names[]; /* by bit, NULL-terminated */

/* tl_parse_faults reads a comma-separated list of fault names into *out;
 * it returns the first unknown name, or NULL. */
const char *tl_parse_faults(const char *list, unsigned *out);

tl_runtime *tl_new(unsigned faults, tl_emit emit, void *ctx);
/* tl_destroy frees everything the runtime holds, reporting nothing. */
void tl_destroy(tl_runtime *rt);

/* The calls. Each returns NULL when done, or the runtime's message when
 * it refused the call (valid until the next call). */
const char *tl_scope_enter(tl_runtime *rt);
const char *tl_scope_exit(tl_runtime *rt);
const char *tl_alloc(tl_runtime *rt, uint64_t size, void **out);
const char *tl_struct_init(tl_runtime *rt, uint64_t size, void *const *fields, int n, void **out);
const char *tl_acquire(tl_runtime *rt, void *p);
const char *tl_release(tl_runtime *rt, void *p);
const char *tl_register(tl_runtime *rt, void *p);
const char *tl_unregister(tl_runtime *rt, void *p);
const char *tl_param_register(tl_runtime *rt, const char *name, void *p);
const char *tl_param_release(tl_runtime *rt, const char *name);
const char *tl_end(tl_runtime *rt);

#endif
