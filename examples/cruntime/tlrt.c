/* tlrt.c: the runtime. See tlrt.h for the contract. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "tlrt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tl_fault_names[] = {
    "stale-record-not-purged", "unregister-releases", "unregister-oldest-record",
    "struct-init-no-acquire", "struct-death-no-field-release", "param-register-no-acquire",
    "param-reregister-no-release-old", "release-ignores-zero", "zst-allocates",
    "scope-exit-oldest-first", "u8-count", NULL,
};

/* A reference that outlives what it names must know whether it still
 * names it: an object's serial number tells a new object at a reused
 * address from the dead one. Scope records do without (they are bare
 * pointers, as TensorLogic's are): stale ones are purged on reuse. */
typedef struct {
    void *addr;
    uint64_t serial;
} ref;

typedef struct {
    void *addr;
    uint64_t size, serial;
    int count;
    int is_struct, zst;
    int nfields;
    ref *fields;
} object;

typedef struct {
    void **recs;
    int n, cap;
} scope;

#define MAX_PARAMS 64

struct tl_runtime {
    object **objs; /* the live objects, in no order */
    int nobjs, capobjs;
    scope *scopes; /* scopes[0..depth) are open */
    int depth, capscopes;
    struct {
        char *name;
        ref held;
    } params[MAX_PARAMS];
    int nparams;
    unsigned faults;
    uint64_t serial;
    tl_emit emit;
    void *ctx;
    char err[256]; /* the first misuse the current call found */
};

/* The dangling address a zero-sized value gets under zst-allocates. */
#define ZST_ADDR ((void *)0x8)

static int has(tl_runtime *rt, unsigned f) { return (rt->faults & f) != 0; }

/* oom says what the runtime could not allocate, then aborts: a crash
 * with nothing on stderr leaves its user guessing. */
static void oom(const char *what, unsigned long long n) {
    fprintf(stderr, "tlrt: out of memory: %llu bytes for %s\n", n, what);
    abort();
}

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n);
    if (!q)
        oom("the runtime's tables", n);
    return q;
}

/* misuse notes the call's first misuse; the call then returns it. */
static void misuse(tl_runtime *rt, const char *fmt, ...) {
    if (rt->err[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rt->err, sizeof rt->err, fmt, ap);
    va_end(ap);
}

static const char *outcome(tl_runtime *rt) { return rt->err[0] ? rt->err : NULL; }

static void emit(tl_runtime *rt, const char *op, void *addr) {
    tl_event ev = {op, addr, 0, NULL, NULL, 0};
    rt->emit(rt->ctx, &ev);
}

const char *tl_parse_faults(const char *list, unsigned *out) {
    static char bad[64];
    *out = 0;
    while (list && *list) {
        const char *end = strchr(list, ',');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        int i;
        for (i = 0; tl_fault_names[i]; i++)
            if (strlen(tl_fault_names[i]) == n && strncmp(tl_fault_names[i], list, n) == 0)
                break;
        if (n > 0 && !tl_fault_names[i]) {
            snprintf(bad, sizeof bad, "%.*s", (int)n, list);
            return bad;
        }
        if (n > 0)
            *out |= 1u << i;
        list = end ? end + 1 : NULL;
    }
    return NULL;
}

tl_runtime *tl_new(unsigned faults, tl_emit emit_fn, void *ctx) {
    tl_runtime *rt = calloc(1, sizeof *rt);
    if (!rt)
        oom("a runtime", sizeof *rt);
    rt->faults = faults;
    rt->emit = emit_fn;
    rt->ctx = ctx;
    return rt;
}

static void drop_object(object *o) {
    if (!o->zst)
        free(o->addr);
    free(o->fields);
    free(o);
}

void tl_destroy(tl_runtime *rt) {
    for (int i = 0; i < rt->nobjs; i++)
        drop_object(rt->objs[i]);
    for (int i = 0; i < rt->capscopes; i++)
        free(rt->scopes[i].recs);
    for (int i = 0; i < rt->nparams; i++)
        free(rt->params[i].name);
    free(rt->objs);
    free(rt->scopes);
    free(rt);
}

/* lookup returns the live object at p, or NULL. */
static object *lookup(tl_runtime *rt, void *p) {
    for (int i = 0; i < rt->nobjs; i++)
        if (rt->objs[i]->addr == p)
            return rt->objs[i];
    return NULL;
}

/* live returns the live object p names, noting a misuse if there is none. */
static object *live(tl_runtime *rt, const char *op, void *p) {
    object *o = lookup(rt, p);
    if (!o)
        misuse(rt, "%s %p: no live object at this address", op, p);
    return o;
}

static void push_record(tl_runtime *rt, void *p) {
    scope *s = &rt->scopes[rt->depth - 1];
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 8;
        s->recs = xrealloc(s->recs, s->cap * sizeof *s->recs);
    }
    s->recs[s->n++] = p;
}

static void remove_record(scope *s, int i) {
    memmove(&s->recs[i], &s->recs[i + 1], (s->n - i - 1) * sizeof *s->recs);
    s->n--;
}

/* purge removes the records of dead objects that lived at p: the fix
 * tl_runtime's memory manager made when a stale record released the new
 * object at its address. */
static void purge(tl_runtime *rt, void *p) {
    for (int d = 0; d < rt->depth; d++)
        for (int i = rt->scopes[d].n - 1; i >= 0; i--)
            if (rt->scopes[d].recs[i] == p)
                remove_record(&rt->scopes[d], i);
}

/* new_object makes a live object of size bytes, count 1, no record yet. */
static object *new_object(tl_runtime *rt, uint64_t size) {
    object *o = calloc(1, sizeof *o);
    if (!o)
        oom("an object's record", sizeof *o);
    if (size == 0) { /* only under zst-allocates */
        o->addr = ZST_ADDR;
        o->zst = 1;
    } else if (!(o->addr = malloc(size))) {
        oom("an object (malloc)", size);
    }
    if (!has(rt, TL_STALE_RECORD_NOT_PURGED))
        purge(rt, o->addr);
    o->size = size;
    o->count = 1;
    o->serial = ++rt->serial;
    if (rt->nobjs == rt->capobjs) {
        rt->capobjs = rt->capobjs ? 2 * rt->capobjs : 16;
        rt->objs = xrealloc(rt->objs, rt->capobjs * sizeof *rt->objs);
    }
    rt->objs[rt->nobjs++] = o;
    return o;
}

static void release_ref(tl_runtime *rt, const char *op, ref r, const char *what);

/* die frees o: a struct first releases each of its fields. */
static void die(tl_runtime *rt, const char *op, object *o) {
    if (o->is_struct && !has(rt, TL_STRUCT_DEATH_NO_FIELD_RELEASE))
        for (int i = 0; i < o->nfields; i++)
            release_ref(rt, op, o->fields[i], "a field of the dying struct is already freed");
    for (int i = 0; i < rt->nobjs; i++)
        if (rt->objs[i] == o) {
            rt->objs[i] = rt->objs[--rt->nobjs];
            break;
        }
    void *addr = o->addr;
    drop_object(o);
    emit(rt, "free", addr);
}

/* counted keeps a count as the runtime's header does: under u8-count, in
 * a byte, which wraps at 256. */
static int counted(tl_runtime *rt, int count) { return has(rt, TL_U8_COUNT) ? (uint8_t)count : count; }

static void acquire_object(tl_runtime *rt, object *o) { o->count = counted(rt, o->count + 1); }

static void release_object(tl_runtime *rt, const char *op, object *o) {
    o->count = counted(rt, o->count - 1);
    if (o->count == 0 && !has(rt, TL_RELEASE_IGNORES_ZERO))
        die(rt, op, o);
}

/* release_ref releases what r names, if it still lives. */
static void release_ref(tl_runtime *rt, const char *op, ref r, const char *what) {
    object *o = lookup(rt, r.addr);
    if (!o || o->serial != r.serial) {
        misuse(rt, "%s %p: %s", op, r.addr, what);
        return;
    }
    release_object(rt, op, o);
}

const char *tl_scope_enter(tl_runtime *rt) {
    rt->err[0] = 0;
    emit(rt, "scope_enter", NULL);
    if (rt->depth == rt->capscopes) {
        int cap = rt->capscopes ? 2 * rt->capscopes : 8;
        rt->scopes = xrealloc(rt->scopes, cap * sizeof *rt->scopes);
        memset(&rt->scopes[rt->capscopes], 0, (cap - rt->capscopes) * sizeof *rt->scopes);
        rt->capscopes = cap;
    }
    rt->scopes[rt->depth++].n = 0;
    return NULL;
}

/* tl_scope_exit releases each record's object, newest first; a record
 * whose object is dead (stale) does nothing. */
const char *tl_scope_exit(tl_runtime *rt) {
    rt->err[0] = 0;
    emit(rt, "scope_exit", NULL);
    if (rt->depth == 0) {
        misuse(rt, "scope_exit: no scope is open");
        return outcome(rt);
    }
    scope *s = &rt->scopes[--rt->depth];
    for (int k = 0; k < s->n; k++) {
        int i = has(rt, TL_SCOPE_EXIT_OLDEST_FIRST) ? k : s->n - 1 - k;
        object *o = lookup(rt, s->recs[i]);
        if (o)
            release_object(rt, "scope_exit", o);
    }
    s->n = 0;
    return outcome(rt);
}

const char *tl_alloc(tl_runtime *rt, uint64_t size, void **out) {
    rt->err[0] = 0;
    *out = NULL;
    if (size == 0 && !has(rt, TL_ZST_ALLOCATES)) { /* a zero-sized type is NULL */
        tl_event ev = {"alloc", NULL, 0, NULL, NULL, 0};
        rt->emit(rt->ctx, &ev);
        return NULL;
    }
    object *o = new_object(rt, size);
    *out = o->addr;
    tl_event ev = {"alloc", o->addr, size, NULL, NULL, 0};
    rt->emit(rt->ctx, &ev);
    if (rt->depth == 0)
        misuse(rt, "alloc %p: no scope is open: the object has no record", o->addr);
    else
        push_record(rt, o->addr);
    return outcome(rt);
}

const char *tl_struct_init(tl_runtime *rt, uint64_t size, void *const *fields, int n, void **out) {
    rt->err[0] = 0;
    *out = NULL;
    int holds = 0;
    for (int i = 0; i < n; i++)
        holds |= fields[i] != NULL;
    if (size == 0 && (holds || !has(rt, TL_ZST_ALLOCATES))) {
        tl_event ev = {"struct_init", NULL, 0, NULL, fields, n};
        rt->emit(rt->ctx, &ev);
        if (holds)
            misuse(rt, "struct_init: a zero-sized (NULL) struct cannot hold fields");
        return outcome(rt);
    }
    if (rt->depth == 0)
        misuse(rt, "struct_init: no scope is open: the object has no record");
    /* The fields are looked up before the struct is made: malloc may give
     * the struct the address of a dead field. */
    ref *held = calloc(n ? n : 1, sizeof *held);
    if (!held)
        oom("a struct's fields", (unsigned long long)n * sizeof *held);
    int nheld = 0;
    for (int i = 0; i < n; i++) {
        if (!fields[i])
            continue;
        object *f = live(rt, "struct_init", fields[i]);
        if (f)
            held[nheld++] = (ref){f->addr, f->serial};
    }
    object *o = new_object(rt, size);
    *out = o->addr;
    tl_event ev = {"struct_init", o->addr, size, NULL, fields, n};
    rt->emit(rt->ctx, &ev);
    o->is_struct = 1;
    if (rt->depth > 0)
        push_record(rt, o->addr);
    for (int i = 0; i < nheld; i++)
        if (!has(rt, TL_STRUCT_INIT_NO_ACQUIRE))
            acquire_object(rt, lookup(rt, held[i].addr));
    o->fields = held;
    o->nfields = nheld;
    return outcome(rt);
}

const char *tl_acquire(tl_runtime *rt, void *p) {
    rt->err[0] = 0;
    emit(rt, "acquire", p);
    object *o = p ? live(rt, "acquire", p) : NULL;
    if (o)
        acquire_object(rt, o);
    return outcome(rt);
}

const char *tl_release(tl_runtime *rt, void *p) {
    rt->err[0] = 0;
    emit(rt, "release", p);
    object *o = p ? live(rt, "release", p) : NULL;
    if (o)
        release_object(rt, "release", o);
    return outcome(rt);
}

/* tl_register adds a record of p to the top scope: a caller takes a
 * returned value. The count does not change. */
const char *tl_register(tl_runtime *rt, void *p) {
    rt->err[0] = 0;
    emit(rt, "register", p);
    if (!p)
        return NULL;
    if (rt->depth == 0) {
        misuse(rt, "register %p: no scope is open", p);
        return outcome(rt);
    }
    if (live(rt, "register", p))
        push_record(rt, p);
    return outcome(rt);
}

/* tl_unregister removes p's newest record: a value moves out of its scope
 * (returned, or stored). The count does not change: it moves too. */
const char *tl_unregister(tl_runtime *rt, void *p) {
    rt->err[0] = 0;
    emit(rt, "unregister", p);
    object *o = p ? live(rt, "unregister", p) : NULL;
    if (!o)
        return outcome(rt);
    int oldest = has(rt, TL_UNREGISTER_OLDEST_RECORD);
    for (int k = 0; k < rt->depth; k++) {
        scope *s = &rt->scopes[oldest ? k : rt->depth - 1 - k];
        for (int j = 0; j < s->n; j++) {
            int i = oldest ? j : s->n - 1 - j;
            if (s->recs[i] == p) {
                remove_record(s, i);
                if (has(rt, TL_UNREGISTER_RELEASES))
                    release_object(rt, "unregister", o);
                return outcome(rt);
            }
        }
    }
    misuse(rt, "unregister %p: the object has no record in any open scope", p);
    return outcome(rt);
}

static int param_index(tl_runtime *rt, const char *name) {
    for (int i = 0; i < rt->nparams; i++)
        if (strcmp(rt->params[i].name, name) == 0)
            return i;
    return -1;
}

/* tl_param_register holds p under name, acquiring it, and releases what
 * the name held before. NULL does nothing: the name keeps its object. */
const char *tl_param_register(tl_runtime *rt, const char *name, void *p) {
    rt->err[0] = 0;
    tl_event ev = {"param_register", p, 0, name, NULL, 0};
    rt->emit(rt->ctx, &ev);
    object *o = p ? live(rt, "param_register", p) : NULL;
    if (!o)
        return outcome(rt);
    int i = param_index(rt, name);
    if (i < 0 && rt->nparams == MAX_PARAMS) {
        misuse(rt, "param_register %s: more than %d parameters", name, MAX_PARAMS);
        return outcome(rt);
    }
    if (!has(rt, TL_PARAM_REGISTER_NO_ACQUIRE))
        acquire_object(rt, o);
    ref now = {o->addr, o->serial};
    if (i < 0) {
        rt->params[rt->nparams].name = strdup(name);
        rt->params[rt->nparams++].held = now;
        return outcome(rt);
    }
    ref old = rt->params[i].held;
    rt->params[i].held = now;
    if (!has(rt, TL_PARAM_REREGISTER_NO_RELEASE_OLD))
        release_ref(rt, "param_register", old, "the object the name held is already freed");
    return outcome(rt);
}

const char *tl_param_release(tl_runtime *rt, const char *name) {
    rt->err[0] = 0;
    tl_event ev = {"param_release", NULL, 0, name, NULL, 0};
    rt->emit(rt->ctx, &ev);
    int i = param_index(rt, name);
    if (i < 0) {
        misuse(rt, "param_release %s: no parameter is registered under this name", name);
        return outcome(rt);
    }
    ref old = rt->params[i].held;
    free(rt->params[i].name);
    rt->params[i] = rt->params[--rt->nparams];
    release_ref(rt, "param_release", old, "the parameter's object is already freed");
    return outcome(rt);
}

const char *tl_end(tl_runtime *rt) {
    rt->err[0] = 0;
    emit(rt, "end", NULL);
    if (rt->depth > 0)
        misuse(rt, "end: %d scope(s) still open", rt->depth);
    return outcome(rt);
}
