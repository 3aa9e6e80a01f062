/*
 * insn_profile: a QEMU TCG plugin that counts the guest kernel's executed
 * instructions per translation block, in phases (see README.md,
 * "Instruction profile", and scripts/profile-virtio.sh), and its executed
 * locked instructions per instruction, split by whether the cache line they
 * write is shared between vCPUs.
 *
 *   qemu-system-x86_64 ... -plugin file=insn_profile.so,mark=0xADDR,out=PATH
 *
 * At translation every TB that starts at a kernel address (>= KERNEL_BASE)
 * gets an inline "add 1" on the counter of its (start vaddr, instruction
 * count) entry: a vaddr translated again (TB flush, icount's I/O
 * retranslation, a second vCPU) shares the entry when its length is the
 * same, and gets an entry of its own when it is not, so ninsns * count is
 * right for each. User-space TBs only add their length to one counter.
 *
 * Locked instructions: at translation each instruction of a kernel TB is
 * decoded far enough to see whether it is locked: a LOCK prefix (0xf0)
 * among its legacy prefixes, or xchg (0x86/0x87, after the prefixes and an
 * optional REX) with a memory operand, which x86 locks implicitly. Each
 * gets a memory callback on its stores (QEMU_PLUGIN_MEM_W: without
 * CF_PARALLEL, as under icount, TCG splits the read-modify-write into a
 * load and a store; with it, one atomic access reported as RW; either way
 * one callback per execution; cmpxchg16b, which stores its 16 bytes as two
 * 8-byte stores, is counted at its first). The callback records, per phase,
 * the executions per (instruction, 64-byte cache line of the guest virtual
 * address written) and, per cache line, the set of vCPUs that did a locked
 * write to it. At the end of the phase an execution is "on a shared line"
 * when the line it wrote was written by locked instructions of more than
 * one vCPU in that phase (at any time in the phase, not necessarily at
 * once). Limits: only locked writes are tracked, so a line that one vCPU
 * writes with locked instructions and another only reads or writes with
 * plain stores counts as not shared; lines go by guest virtual address, so
 * two mappings of one physical line are two lines; a task that migrates
 * between vCPUs makes its own lines shared; a line touched once by a second
 * vCPU makes every locked write to it in the phase shared.
 *
 * Whenever the TB at `mark` (a guest kernel function, e.g. __x64_sys_sync)
 * executes, the tables so far are appended to `out` as phase N and every
 * counter is zeroed: a guest that calls sync(2) between its workloads cuts
 * the run into phases. The last phase is written at exit. Format:
 *
 *   phase N user_insns=U marks=M end=WHY locked_insns=L
 *   <vaddr hex> <ninsns> <count>      (count > 0 only)
 *   ...
 *   L <insn vaddr hex> <count> <count_on_shared_lines>   (count > 0 only)
 *
 * L is the phase's locked instruction executions; a vaddr may have two L
 * lines if different code was translated there (sum them).
 *
 * Caveats: an inline TB counter counts TB entries, so a TB left early (an
 * exception or interrupt mid-block, icount's I/O exit) counts as if it had
 * run whole (the locked counts come from the stores themselves and are
 * exact); counters are plain adds (exact under icount's single-threaded
 * TCG, racy under MTTCG). The plugin's own cost runs on the host and is not
 * in the guest's instruction count.
 *
 * The declarations below are the subset of QEMU's plugin API (API version 1,
 * QEMU 6.0 .. 8.x, include/qemu/qemu-plugin.h in QEMU's tree) that this file
 * uses, written out here so that it builds without QEMU's sources; build with
 * QEMU_PLUGIN_H=/path/to/qemu-plugin.h (see Makefile) to compile against
 * QEMU's own header instead.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later (it links against QEMU's
 * GPL-2.0-or-later plugin API)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#ifdef USE_QEMU_PLUGIN_H
#include <qemu-plugin.h>
#else
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t {
    const char *target_name;
    struct {
        int min;
        int cur;
    } version;
    bool system_emulation;
    union {
        struct {
            int smp_vcpus;
            int max_vcpus;
        } system;
    };
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef uint32_t qemu_plugin_meminfo_t;
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
                                          uint64_t vaddr, void *userdata);
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
#define QEMU_PLUGIN_VERSION 1
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw,
                                      void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);
#endif

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define KERNEL_BASE 0xffff800000000000ULL

struct entry {
    uint64_t count;         /* the inline op's target: keep it first */
    uint64_t vaddr;
    uint64_t ninsns;
    struct entry *next;     /* same vaddr, another length */
};

/* A locked instruction: the userdata of its memory callback. */
struct locked_insn {
    uint64_t vaddr;
    bool first_store_only;      /* cmpxchg16b: count its store at +0, not +8 */
    uint64_t count;             /* the phase's executions, summed at dump */
    uint64_t shared;            /* of which on shared lines */
    struct locked_insn *next;   /* same vaddr, another kind */
};

/* A cache line written by locked instructions in the phase. */
struct line_vcpus {
    uint64_t line;              /* the key: vaddr & ~63 */
    uint64_t vcpus;             /* bit per vCPU that did a locked write to it */
};

/* Executions of one locked instruction on one cache line in the phase. */
struct insn_line {
    struct locked_insn *insn;   /* key, with line */
    uint64_t line;
    uint64_t count;
};

#define LINE_MASK (~(uint64_t)63)

static GMutex lock;
static GHashTable *by_vaddr;   /* vaddr -> struct entry * (list head) */
static GPtrArray *entries;     /* every entry, in creation order */
static uint64_t user_insns;    /* instructions of user-space TBs */
static uint64_t mark_vaddr;
static uint64_t marks;
static unsigned phase;
static FILE *out;
static GHashTable *locked_by_vaddr; /* vaddr -> struct locked_insn * (list head) */
static GPtrArray *locked;           /* every locked_insn, in creation order */
static GHashTable *line_vcpus;      /* &line -> struct line_vcpus, this phase's */
static GHashTable *insn_lines;      /* struct insn_line -> itself, this phase's */

static struct entry *entry_for(uint64_t vaddr, uint64_t ninsns)
{
    struct entry *head = g_hash_table_lookup(by_vaddr, &vaddr), *e;

    for (e = head; e; e = e->next) {
        if (e->ninsns == ninsns) {
            return e;
        }
    }
    e = g_new0(struct entry, 1);
    e->vaddr = vaddr;
    e->ninsns = ninsns;
    e->next = head;
    /* the key lives in the list's newest entry */
    g_hash_table_steal(by_vaddr, &vaddr);
    g_hash_table_insert(by_vaddr, &e->vaddr, e);
    g_ptr_array_add(entries, e);
    return e;
}

enum lock_kind { NOT_LOCKED, LOCKED, LOCKED_CMPXCHG16B };

/*
 * Whether the instruction in p[0..n) is locked: a LOCK prefix among its
 * legacy prefixes, or xchg with a memory operand (implicitly locked).
 * LOCKED_CMPXCHG16B for lock cmpxchg16b (0f c7 /1 with REX.W), which TCG
 * without CF_PARALLEL stores as two 8-byte stores.
 */
static enum lock_kind lock_kind(const uint8_t *p, size_t n)
{
    bool lock_prefix = false, rex_w = false;
    size_t i;
    uint8_t op;

    for (i = 0; i < n; i++) {
        uint8_t b = p[i];
        if (b == 0xf0) {
            lock_prefix = true;
        } else if (b != 0x66 && b != 0x67 && b != 0x2e && b != 0x36 && b != 0x3e &&
                   b != 0x26 && b != 0x64 && b != 0x65 && b != 0xf2 && b != 0xf3) {
            break;
        }
    }
    if (i < n && (p[i] & 0xf0) == 0x40) {
        rex_w = p[i] & 0x08;
        i++;
    }
    if (i >= n) {
        return NOT_LOCKED;
    }
    op = p[i];
    if ((op == 0x86 || op == 0x87) && i + 1 < n && (p[i + 1] >> 6) != 3) {
        return LOCKED;
    }
    if (!lock_prefix) {
        return NOT_LOCKED;
    }
    if (op == 0x0f && i + 2 < n && p[i + 1] == 0xc7 && ((p[i + 2] >> 3) & 7) == 1 && rex_w) {
        return LOCKED_CMPXCHG16B;
    }
    return LOCKED;
}

/* Called with `lock` held. */
static struct locked_insn *locked_for(uint64_t vaddr, enum lock_kind kind)
{
    struct locked_insn *head = g_hash_table_lookup(locked_by_vaddr, &vaddr), *l;
    bool first_store_only = kind == LOCKED_CMPXCHG16B;

    for (l = head; l; l = l->next) {
        if (l->first_store_only == first_store_only) {
            return l;
        }
    }
    l = g_new0(struct locked_insn, 1);
    l->vaddr = vaddr;
    l->first_store_only = first_store_only;
    l->next = head;
    g_hash_table_steal(locked_by_vaddr, &vaddr);
    g_hash_table_insert(locked_by_vaddr, &l->vaddr, l);
    g_ptr_array_add(locked, l);
    return l;
}

static guint insn_line_hash(gconstpointer p)
{
    const struct insn_line *il = p;
    uint64_t h = ((uint64_t)(uintptr_t)il->insn * 0x9e3779b97f4a7c15ULL) ^ (il->line >> 6);

    return (guint)(h ^ (h >> 32));
}

static gboolean insn_line_equal(gconstpointer a, gconstpointer b)
{
    const struct insn_line *x = a, *y = b;

    return x->insn == y->insn && x->line == y->line;
}

/* A store of a locked instruction (userdata: its struct locked_insn). */
static void locked_store(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
                         void *udata)
{
    struct locked_insn *l = udata;
    uint64_t line = vaddr & LINE_MASK;
    struct insn_line key = { .insn = l, .line = line, .count = 0 }, *il;
    struct line_vcpus *lv;

    (void)info;
    if (l->first_store_only && (vaddr & 8)) {
        return;     /* cmpxchg16b's second 8-byte store (its address is 16-aligned) */
    }
    g_mutex_lock(&lock);
    lv = g_hash_table_lookup(line_vcpus, &line);
    if (!lv) {
        lv = g_new0(struct line_vcpus, 1);
        lv->line = line;
        g_hash_table_insert(line_vcpus, &lv->line, lv);
    }
    lv->vcpus |= 1ULL << (vcpu_index & 63);
    il = g_hash_table_lookup(insn_lines, &key);
    if (!il) {
        il = g_new(struct insn_line, 1);
        *il = key;
        g_hash_table_add(insn_lines, il);
    }
    il->count++;
    g_mutex_unlock(&lock);
}

/* Append the tables as phase N and zero them. Called with `lock` held. */
static void dump_phase(const char *why)
{
    GHashTableIter it;
    gpointer p;
    uint64_t locked_insns = 0;
    guint i;

    /* classify each (instruction, line) now that the lines' vCPU sets are whole */
    g_hash_table_iter_init(&it, insn_lines);
    while (g_hash_table_iter_next(&it, &p, NULL)) {
        struct insn_line *il = p;
        struct line_vcpus *lv = g_hash_table_lookup(line_vcpus, &il->line);

        il->insn->count += il->count;
        if (lv && (lv->vcpus & (lv->vcpus - 1))) {
            il->insn->shared += il->count;
        }
        locked_insns += il->count;
    }
    fprintf(out, "phase %u user_insns=%" PRIu64 " marks=%" PRIu64 " end=%s locked_insns=%" PRIu64 "\n",
            phase, user_insns, marks, why, locked_insns);
    for (i = 0; i < entries->len; i++) {
        struct entry *e = g_ptr_array_index(entries, i);
        if (e->count) {
            fprintf(out, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", e->vaddr, e->ninsns, e->count);
            e->count = 0;
        }
    }
    for (i = 0; i < locked->len; i++) {
        struct locked_insn *l = g_ptr_array_index(locked, i);
        if (l->count) {
            fprintf(out, "L %" PRIx64 " %" PRIu64 " %" PRIu64 "\n", l->vaddr, l->count, l->shared);
            l->count = 0;
            l->shared = 0;
        }
    }
    fflush(out);
    g_hash_table_remove_all(insn_lines);
    g_hash_table_remove_all(line_vcpus);
    user_insns = 0;
    phase++;
}

static void mark_exec(unsigned int vcpu_index, void *udata)
{
    (void)vcpu_index;
    (void)udata;
    g_mutex_lock(&lock);
    marks++;
    dump_phase("mark");
    g_mutex_unlock(&lock);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
    uint64_t n = qemu_plugin_tb_n_insns(tb);
    struct entry *e;
    size_t i;

    (void)id;
    if (vaddr < KERNEL_BASE) {
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &user_insns, n);
        return;
    }
    g_mutex_lock(&lock);
    e = entry_for(vaddr, n);
    for (i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        enum lock_kind kind = lock_kind(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));

        if (kind != NOT_LOCKED) {
            struct locked_insn *l = locked_for(qemu_plugin_insn_vaddr(insn), kind);
            qemu_plugin_register_vcpu_mem_cb(insn, locked_store, QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_W, l);
        }
    }
    g_mutex_unlock(&lock);
    if (vaddr == mark_vaddr) {
        /* the callback runs before the block: its own count goes to the
         * phase that follows, like the rest of sync(2) */
        qemu_plugin_register_vcpu_tb_exec_cb(tb, mark_exec, QEMU_PLUGIN_CB_NO_REGS, NULL);
    }
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &e->count, 1);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
    (void)id;
    (void)udata;
    g_mutex_lock(&lock);
    dump_phase("exit");
    fclose(out);
    out = NULL;
    g_mutex_unlock(&lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    const char *path = NULL;
    int i;

    if (!info->system_emulation) {
        qemu_plugin_outs("insn_profile: system emulation only\n");
        return -1;
    }
    for (i = 0; i < argc; i++) {
        if (g_str_has_prefix(argv[i], "mark=")) {
            mark_vaddr = g_ascii_strtoull(argv[i] + 5, NULL, 16);
        } else if (g_str_has_prefix(argv[i], "out=")) {
            path = argv[i] + 4;
        } else {
            fprintf(stderr, "insn_profile: unknown argument %s (mark=0xADDR,out=PATH)\n", argv[i]);
            return -1;
        }
    }
    if (!path || mark_vaddr < KERNEL_BASE) {
        fprintf(stderr, "insn_profile: need out=PATH and mark=0xADDR (a kernel address)\n");
        return -1;
    }
    out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "insn_profile: %s: %s\n", path, strerror(errno));
        return -1;
    }
    by_vaddr = g_hash_table_new(g_int64_hash, g_int64_equal);
    entries = g_ptr_array_new();
    locked_by_vaddr = g_hash_table_new(g_int64_hash, g_int64_equal);
    locked = g_ptr_array_new();
    line_vcpus = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
    insn_lines = g_hash_table_new_full(insn_line_hash, insn_line_equal, g_free, NULL);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
