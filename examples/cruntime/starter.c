/* starter.c: a tlcheck-drive driver to copy. It serves tlrt (tlrt.h) over
 * the protocol of drive/PROTOCOL.md, written from the documents alone, in
 * the shape most runtimes need: a table from tlcheck's handles to the
 * runtime's addresses, an emit callback that writes each event the
 * runtime reports as JSON, and one answer line per call. It keeps no books
 * of its own: tlcheck's programs use the runtime as its contract says
 * (PROTOCOL.md, "Correct use and misuse"), so a handle it is sent always
 * names a live object, and the runtime, which keeps its books by address,
 * needs no help to tell one object from another.
 *
 *   cc -O2 -o tlrt-starter tlrt.c starter.c
 *   tlcheck fuzz --exec ./tlrt-starter
 *   tlcheck fuzz --exec './tlrt-starter --faults=u8-count'
 *
 * To drive your own runtime: replace make() (one case per call) and the
 * tl_ calls in main(); keep the rest. */
#define _POSIX_C_SOURCE 200809L /* getline */
#include "tlrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the answer being written: events go straight into it ---- */

static char *out;
static size_t out_len, out_cap;
static int nevents;

static void put(const char *s, size_t n) {
    if (out_len + n + 1 > out_cap) {
        out_cap = 2 * (out_len + n + 1);
        if (!(out = realloc(out, out_cap)))
            abort();
    }
    memcpy(out + out_len, s, n);
    out_len += n;
}
static void puts_(const char *s) { put(s, strlen(s)); }

static void put_num(unsigned long long n) {
    char b[32];
    puts_((snprintf(b, sizeof b, "%llu", n), b));
}

static void put_addr(const void *p) { /* "0x55d0c1a2b2a0"; NULL is "0x0" */
    char b[32];
    puts_((snprintf(b, sizeof b, "\"0x%llx\"", (unsigned long long)(uintptr_t)p), b));
}

static void put_string(const char *s) { /* JSON-quoted */
    puts_("\"");
    for (; *s; s++) {
        char b[8];
        if (*s == '"' || *s == '\\')
            put("\\", 1), put(s, 1);
        else if ((unsigned char)*s < 0x20)
            puts_((snprintf(b, sizeof b, "\\u%04x", *s), b));
        else
            put(s, 1);
    }
    puts_("\"");
}

/* on_event is tlrt's emit callback: every event the runtime reports, the
 * call's own first and then its frees, becomes one event of the answer. */
static void on_event(void *ctx, const tl_event *ev) {
    (void)ctx;
    puts_(nevents++ ? ",{\"op\":\"" : "{\"op\":\"");
    puts_(ev->op);
    puts_("\"");
    /* Every op that names an object carries addr, NULL ("0x0") included;
     * the scope ops, end and param_release name none. */
    if (strcmp(ev->op, "scope_enter") && strcmp(ev->op, "scope_exit") && strcmp(ev->op, "end") &&
        strcmp(ev->op, "param_release"))
        puts_(",\"addr\":"), put_addr(ev->addr);
    if (!strcmp(ev->op, "alloc") || !strcmp(ev->op, "struct_init"))
        puts_(",\"size\":"), put_num(ev->size);
    if (ev->name)
        puts_(",\"name\":"), put_string(ev->name);
    if (!strcmp(ev->op, "struct_init")) {
        puts_(",\"fields\":[");
        for (int i = 0; i < ev->nfields; i++)
            puts_(i ? "," : ""), put_addr(ev->fields[i]);
        puts_("]");
    }
    puts_("}");
}

/* ---- reading a call: flat JSON objects, whose fields we find by name ---- */

/* field returns what follows "key": in line, or NULL. Calls never nest
 * objects, and a name never holds a quote (PROTOCOL.md), so a search is
 * enough. */
static const char *field(const char *line, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    return p ? p + strlen(pat) : NULL;
}

static long long num(const char *line, const char *key) {
    const char *p = field(line, key);
    return p ? strtoll(p, NULL, 10) : 0;
}

/* str copies the string value of key into buf ("" if absent). */
static const char *str(const char *line, const char *key, char *buf, size_t n) {
    const char *p = field(line, key);
    size_t k = 0;
    if (p && *p == '"')
        for (p++; *p && *p != '"' && k + 1 < n; p++)
            buf[k++] = *p;
    buf[k] = 0;
    return buf;
}

/* ---- handles: tlcheck names objects 1, 2, 3, ...; 0 is NULL ---- */

static void **handles;
static long nhandles;

static void *addr(long long h) { return h > 0 && h < nhandles ? handles[h] : NULL; }

static void keep(long long h, void *p) {
    if (h <= 0)
        return;
    if (h >= nhandles) {
        long n = 2 * h + 16;
        if (!(handles = realloc(handles, n * sizeof *handles)))
            abort();
        memset(handles + nhandles, 0, (n - nhandles) * sizeof *handles);
        nhandles = n;
    }
    handles[h] = p;
}

/* make makes the call of line on rt: NULL when done, else the runtime's
 * message for its refusal. */
static const char *make(tl_runtime *rt, const char *line, const char *op) {
    char name[64];
    void *p = NULL;
    const char *err;
    if (!strcmp(op, "scope_enter"))
        return tl_scope_enter(rt);
    if (!strcmp(op, "scope_exit"))
        return tl_scope_exit(rt);
    if (!strcmp(op, "alloc")) {
        err = tl_alloc(rt, num(line, "size"), &p);
        keep(num(line, "handle"), p);
        return err;
    }
    if (!strcmp(op, "struct_init")) {
        void *fields[64];
        int n = 0;
        const char *f = field(line, "fields");
        for (f = f ? f + 1 : ""; *f && *f != ']' && n < 64; n++) { /* [1,0,3] */
            char *end;
            fields[n] = addr(strtoll(f, &end, 10));
            f = *end == ',' ? end + 1 : end;
        }
        err = tl_struct_init(rt, num(line, "size"), fields, n, &p);
        keep(num(line, "handle"), p);
        return err;
    }
    if (!strcmp(op, "acquire"))
        return tl_acquire(rt, addr(num(line, "target")));
    if (!strcmp(op, "release"))
        return tl_release(rt, addr(num(line, "target")));
    if (!strcmp(op, "register"))
        return tl_register(rt, addr(num(line, "target")));
    if (!strcmp(op, "unregister"))
        return tl_unregister(rt, addr(num(line, "target")));
    if (!strcmp(op, "param_register"))
        return tl_param_register(rt, str(line, "name", name, sizeof name), addr(num(line, "target")));
    if (!strcmp(op, "param_release"))
        return tl_param_release(rt, str(line, "name", name, sizeof name));
    if (!strcmp(op, "end"))
        return tl_end(rt);
    return "this driver does not take the call"; /* the hello offers no other */
}

int main(int argc, char **argv) {
    unsigned faults = 0;
    int restart = 0;
    for (int i = 1; i < argc; i++) {
        const char *bad = NULL;
        if (!strncmp(argv[i], "--faults=", 9))
            bad = tl_parse_faults(argv[i] + 9, &faults);
        else if (!strcmp(argv[i], "--restart"))
            restart = 1; /* ask tlcheck to start us for every program */
        else
            bad = argv[i];
        if (bad) {
            fprintf(stderr, "tlrt-starter: unknown argument or fault %s\n", bad);
            return 2;
        }
    }
    /* The hello: layer 2, every call of it, and no "misuse": programs of
     * correct use only. */
    printf("{\"protocol\":\"tlcheck-drive\",\"version\":1,\"layers\":[2],"
           "\"source\":\"tlrt (C) behind starter.c\"%s}\n",
           restart ? ",\"restart\":true" : "");
    fflush(stdout);

    tl_runtime *rt = tl_new(faults, on_event, NULL);
    char *line = NULL, op[32];
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        out_len = 0, nevents = 0;
        puts_("{\"id\":"), put_num(num(line, "id")), puts_(",\"events\":[");
        const char *err = NULL;
        if (!strcmp(str(line, "op", op, sizeof op), "reset")) {
            tl_destroy(rt); /* frees everything, reporting nothing */
            rt = tl_new(faults, on_event, NULL);
            if (handles)
                memset(handles, 0, nhandles * sizeof *handles);
        } else {
            err = make(rt, line, op);
        }
        puts_("],\"outcome\":");
        if (err)
            puts_("\"refused\",\"message\":"), put_string(err);
        else
            puts_("\"done\"");
        puts_("}\n");
        fwrite(out, 1, out_len, stdout);
        fflush(stdout); /* every answer, at once: a crash is then blamed on its call */
    }
    tl_destroy(rt);
    return 0;
}
