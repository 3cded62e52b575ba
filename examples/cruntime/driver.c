/* driver.c: tlrt's driver for tlcheck-drive (drive/PROTOCOL.md): it reads
 * calls from stdin, one JSON object a line, makes each on the runtime and
 * answers on stdout with the events the runtime reported and whether it
 * did or refused the call. One process serves many programs: a reset
 * starts a fresh runtime.
 *
 *   cc -O2 -o tlrt-driver tlrt.c driver.c
 *   tlcheck fuzz --exec ./tlrt-driver
 *   TLRT_FAULTS=stale-record-not-purged tlcheck fuzz --exec ./tlrt-driver
 *
 * Faults come from --faults=a,b or the TLRT_FAULTS environment variable. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tlrt.h"

#define MAX_LINE (1 << 20)
#define MAX_FIELDS 64

/* ---- output: the answer being built ---- */

static char *out;
static size_t out_len, out_cap;

/* out_of_memory says what the driver could not allocate, then aborts: a
 * crash with nothing on stderr leaves its user guessing. */
static void out_of_memory(const char *what, size_t n) {
    fprintf(stderr, "tlrt-driver: out of memory: %zu bytes for %s\n", n, what);
    abort();
}

static void put(const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(out + out_len, out_cap - out_len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < out_cap - out_len) {
            out_len += n;
            return;
        }
        out_cap = out_cap * 2 + (n > 0 ? n : 0) + 256;
        if (!(out = realloc(out, out_cap)))
            out_of_memory("an answer", out_cap);
    }
}

/* put_string writes s as a JSON string. */
static void put_string(const char *s) {
    put("\"");
    for (; *s; s++) {
        unsigned char c = *s;
        if (c == '"' || c == '\\')
            put("\\%c", c);
        else if (c < 0x20)
            put("\\u%04x", c);
        else
            put("%c", c);
    }
    put("\"");
}

static int nevents;

/* on_event writes one event of the trace format into the answer. */
static void on_event(void *ctx, const tl_event *ev) {
    (void)ctx;
    put(nevents++ ? ",{\"op\":\"%s\"" : "{\"op\":\"%s\"", ev->op);
    int has_addr = strcmp(ev->op, "scope_enter") && strcmp(ev->op, "scope_exit") &&
                   strcmp(ev->op, "param_release") && strcmp(ev->op, "end");
    if (has_addr)
        put(",\"addr\":\"0x%" PRIxPTR "\"", (uintptr_t)ev->addr);
    if (!strcmp(ev->op, "alloc") || !strcmp(ev->op, "struct_init"))
        put(",\"size\":%" PRIu64, ev->size);
    if (ev->name) {
        put(",\"name\":");
        put_string(ev->name);
    }
    if (!strcmp(ev->op, "struct_init")) {
        put(",\"fields\":[");
        for (int i = 0; i < ev->nfields; i++)
            put(i ? ",\"0x%" PRIxPTR "\"" : "\"0x%" PRIxPTR "\"", (uintptr_t)ev->fields[i]);
        put("]");
    }
    put("}");
}

/* ---- input: lines, flushing the answers before waiting for more ---- */

static char inbuf[1 << 16];
static size_t in_r, in_w;

/* read_line reads the next line into *line (without its newline); it
 * returns its length, or -1 at the end of input. */
static long read_line(char **line, size_t *cap) {
    size_t n = 0;
    for (;;) {
        if (in_r == in_w) {
            fflush(stdout); /* the protocol: answer before waiting */
            ssize_t got = read(0, inbuf, sizeof inbuf);
            if (got <= 0)
                return n > 0 ? (long)n : -1;
            in_r = 0, in_w = (size_t)got;
        }
        char *nl = memchr(inbuf + in_r, '\n', in_w - in_r);
        size_t take = nl ? (size_t)(nl - (inbuf + in_r)) : in_w - in_r;
        if (n + take + 1 > MAX_LINE) {
            fprintf(stderr, "tlrt-driver: a line longer than %d bytes\n", MAX_LINE);
            exit(2);
        }
        if (n + take + 1 > *cap) {
            *cap = 2 * (n + take + 1);
            if (!(*line = realloc(*line, *cap)))
                out_of_memory("a line", *cap);
        }
        memcpy(*line + n, inbuf + in_r, take);
        n += take;
        (*line)[n] = 0;
        in_r += take + (nl != NULL);
        if (nl)
            return (long)n;
    }
}

/* ---- a call, parsed from its line: just enough JSON ---- */

typedef struct {
    long long id;
    char op[32], name[64];
    long handle, target;
    uint64_t size;
    long fields[MAX_FIELDS];
    int nfields;
} call;

static const char *p; /* the parser's position */

static void ws(void) {
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
}

static int string(char *buf, size_t cap) {
    ws();
    if (*p++ != '"')
        return 0;
    size_t n = 0;
    for (; *p != '"'; p++) {
        if (!*p || n + 1 >= cap)
            return 0;
        if (*p == '\\' && (p[1] == '"' || p[1] == '\\' || p[1] == '/'))
            p++;
        else if (*p == '\\')
            return 0; /* names and ops need no other escape */
        buf[n++] = *p;
    }
    p++;
    buf[n] = 0;
    return 1;
}

static int number(uint64_t *u) {
    ws();
    char *end;
    if (*p < '0' || *p > '9')
        return 0;
    *u = strtoull(p, &end, 10);
    p = end;
    return 1;
}

static int skip(void) { /* any value, for fields this driver does not use */
    ws();
    if (*p == '"') {
        char tmp[4096];
        return string(tmp, sizeof tmp);
    }
    if (*p == '[' || *p == '{') {
        int depth = 0;
        do {
            if (*p == '"') {
                char tmp[4096];
                if (!string(tmp, sizeof tmp))
                    return 0;
                continue;
            }
            if (*p == '[' || *p == '{')
                depth++;
            if (*p == ']' || *p == '}')
                depth--;
            if (!*p)
                return 0;
            p++;
        } while (depth > 0);
        return 1;
    }
    while (*p && *p != ',' && *p != '}')
        p++;
    return 1;
}

static int parse(const char *line, call *c) {
    memset(c, 0, sizeof *c);
    p = line;
    ws();
    if (*p++ != '{')
        return 0;
    ws();
    while (*p != '}') {
        char key[32];
        uint64_t u;
        if (!string(key, sizeof key))
            return 0;
        ws();
        if (*p++ != ':')
            return 0;
        if (!strcmp(key, "id") && number(&u))
            c->id = (long long)u;
        else if (!strcmp(key, "op")) {
            if (!string(c->op, sizeof c->op))
                return 0;
        } else if (!strcmp(key, "handle") && number(&u))
            c->handle = (long)u;
        else if (!strcmp(key, "target") && number(&u))
            c->target = (long)u;
        else if (!strcmp(key, "size") && number(&u))
            c->size = u;
        else if (!strcmp(key, "name")) {
            if (!string(c->name, sizeof c->name))
                return 0;
        } else if (!strcmp(key, "fields")) {
            ws();
            if (*p++ != '[')
                return 0;
            ws();
            while (*p != ']') {
                if (c->nfields == MAX_FIELDS || !number(&u))
                    return 0;
                c->fields[c->nfields++] = (long)u;
                ws();
                if (*p == ',')
                    p++;
            }
            p++;
        } else if (!skip())
            return 0;
        ws();
        if (*p == ',')
            p++, ws();
        else if (*p != '}')
            return 0;
    }
    return c->op[0] != 0;
}

/* ---- handles: what the program calls h is the address the runtime gave ---- */

static void **handles;
static size_t nhandles;

static void *handle(long h) { return h > 0 && (size_t)h < nhandles ? handles[h] : NULL; }

static void made(long h, void *addr) {
    if (h <= 0)
        return;
    if ((size_t)h >= nhandles) {
        size_t n = 2 * (size_t)h + 16;
        if (!(handles = realloc(handles, n * sizeof *handles)))
            out_of_memory("the handle table", n * sizeof *handles);
        memset(handles + nhandles, 0, (n - nhandles) * sizeof *handles);
        nhandles = n;
    }
    handles[h] = addr;
}

/* make makes call c on rt and returns the runtime's refusal, or NULL. */
static const char *make(tl_runtime *rt, call *c) {
    const char *op = c->op;
    void *addr = NULL;
    const char *err;
    if (!strcmp(op, "scope_enter"))
        return tl_scope_enter(rt);
    if (!strcmp(op, "scope_exit"))
        return tl_scope_exit(rt);
    if (!strcmp(op, "alloc")) {
        err = tl_alloc(rt, c->size, &addr);
        made(c->handle, addr);
        return err;
    }
    if (!strcmp(op, "struct_init")) {
        void *fields[MAX_FIELDS];
        for (int i = 0; i < c->nfields; i++)
            fields[i] = handle(c->fields[i]);
        err = tl_struct_init(rt, c->size, fields, c->nfields, &addr);
        made(c->handle, addr);
        return err;
    }
    if (!strcmp(op, "acquire"))
        return tl_acquire(rt, handle(c->target));
    if (!strcmp(op, "release"))
        return tl_release(rt, handle(c->target));
    if (!strcmp(op, "register"))
        return tl_register(rt, handle(c->target));
    if (!strcmp(op, "unregister"))
        return tl_unregister(rt, handle(c->target));
    if (!strcmp(op, "param_register"))
        return tl_param_register(rt, c->name, handle(c->target));
    if (!strcmp(op, "param_release"))
        return tl_param_release(rt, c->name);
    if (!strcmp(op, "end"))
        return tl_end(rt);
    fprintf(stderr, "tlrt-driver: no call %s\n", op);
    exit(2);
}

int main(int argc, char **argv) {
    const char *list = getenv("TLRT_FAULTS");
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--faults=", 9)) { /* a mistyped flag must not run without its fault */
            fprintf(stderr, "tlrt-driver: unknown argument %s\nusage: %s [--faults=a,b,...]\n", argv[i], argv[0]);
            return 2;
        }
        list = argv[i] + 9;
    }
    unsigned faults;
    const char *bad = tl_parse_faults(list, &faults);
    if (bad) {
        fprintf(stderr, "tlrt-driver: no fault %s; the faults are:\n", bad);
        for (int i = 0; tl_fault_names[i]; i++)
            fprintf(stderr, "  %s\n", tl_fault_names[i]);
        return 2;
    }
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    printf("{\"protocol\":\"tlcheck-drive\",\"version\":1,\"layers\":[2],"
           "\"source\":\"tlrt (C, glibc malloc), faults: %s\",\"misuse\":true}\n",
           list && *list ? list : "none");

    tl_runtime *rt = tl_new(faults, on_event, NULL);
    char *line = NULL;
    size_t cap = 0;
    call c;
    for (long n = 1; read_line(&line, &cap) >= 0; n++) {
        if (!parse(line, &c)) {
            fprintf(stderr, "tlrt-driver: line %ld is not a call: %.200s\n", n, line);
            return 2;
        }
        out_len = 0, nevents = 0;
        put("{\"id\":%lld,\"events\":[", c.id);
        const char *err = NULL;
        if (!strcmp(c.op, "reset")) {
            tl_destroy(rt);
            rt = tl_new(faults, on_event, NULL);
            if (handles)
                memset(handles, 0, nhandles * sizeof *handles);
        } else {
            err = make(rt, &c);
        }
        if (err) {
            put("],\"outcome\":\"refused\",\"message\":");
            put_string(err);
            put("}\n");
        } else {
            put("],\"outcome\":\"done\"}\n");
        }
        fwrite(out, 1, out_len, stdout);
    }
    fflush(stdout);
    tl_destroy(rt);
    free(line);
    return 0;
}
