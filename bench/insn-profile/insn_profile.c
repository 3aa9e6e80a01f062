/*
 * insn_profile: a QEMU TCG plugin that counts the guest kernel's executed
 * instructions per translation block, in phases (see README.md,
 * "Instruction profile", and scripts/profile-virtio.sh).
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
 * Whenever the TB at `mark` (a guest kernel function, e.g. __x64_sys_sync)
 * executes, the table so far is appended to `out` as phase N and every
 * counter is zeroed: a guest that calls sync(2) between its workloads cuts
 * the run into phases. The last phase is written at exit. Format:
 *
 *   phase N user_insns=U marks=M
 *   <vaddr hex> <ninsns> <count>      (count > 0 only)
 *
 * Caveats: an inline TB counter counts TB entries, so a TB left early (an
 * exception or interrupt mid-block, icount's I/O exit) counts as if it had
 * run whole; counters are plain adds (exact under icount's single-threaded
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
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
#define QEMU_PLUGIN_VERSION 1
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
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

static GMutex lock;
static GHashTable *by_vaddr;   /* vaddr -> struct entry * (list head) */
static GPtrArray *entries;     /* every entry, in creation order */
static uint64_t user_insns;    /* instructions of user-space TBs */
static uint64_t mark_vaddr;
static uint64_t marks;
static unsigned phase;
static FILE *out;

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

/* Append the table as phase N and zero it. Called with `lock` held. */
static void dump_phase(const char *why)
{
    guint i;

    fprintf(out, "phase %u user_insns=%" PRIu64 " marks=%" PRIu64 " end=%s\n",
            phase, user_insns, marks, why);
    for (i = 0; i < entries->len; i++) {
        struct entry *e = g_ptr_array_index(entries, i);
        if (e->count) {
            fprintf(out, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", e->vaddr, e->ninsns, e->count);
            e->count = 0;
        }
    }
    fflush(out);
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

    (void)id;
    if (vaddr < KERNEL_BASE) {
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &user_insns, n);
        return;
    }
    g_mutex_lock(&lock);
    e = entry_for(vaddr, n);
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
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
