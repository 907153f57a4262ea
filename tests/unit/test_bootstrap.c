/* SPDX-License-Identifier: MIT
 *
 * test_bootstrap.c - the TCP bootstrap of the verbs backend on
 * 127.0.0.1: SHA-256 / HMAC against published vectors, a good token (an
 * all-gather and a barrier with max/sum), a wrong token, a peer that
 * never connects and a peer lost mid-run: each a clear error within the
 * timeout. Rank 1 runs in a forked child.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nsim_test.h"
#include "sim/exec/bootstrap.h"

static void hex(const uint8_t *d, char *out)
{
    for (int i = 0; i < 32; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_vectors(void)
{
    uint8_t d[32];
    char h[65];
    nsim_sha256("abc", 3, d);
    hex(d, h);
    CU_ASSERT_STRING_EQUAL(h, "ba7816bf8f01cfea414140de5dae2223"
                              "b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    nsim_sha256(m, strlen(m), d); /* two blocks of padding */
    hex(d, h);
    CU_ASSERT_STRING_EQUAL(h, "248d6a61d20638b8e5c026930c3e6039"
                              "a33ce45964ff2167f6ecedd419db06c1");
    /* RFC 4231 test case 2 */
    nsim_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, d);
    hex(d, h);
    CU_ASSERT_STRING_EQUAL(h, "5bdcc146bf60754e6a042426089575c7"
                              "5a003f089d2739839dec58b964ec3843");
    CU_ASSERT(nsim_ct_equal("abcd", "abcd", 4));
    CU_ASSERT(!nsim_ct_equal("abcd", "abce", 4));
}

static int port_base(void)
{
    return 20000 + (int)(getpid() % 20000);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Child: rank 1 of 2 with token; mode 0 all-gather + barrier, 1 leave
 * right after connecting. Exit 0 on success, 1 on error, 2 on mismatch. */
static void child(const char *addr, const char *token, int mode)
{
    nsim_err err = {0};
    nsim_boot *b = NULL;
    if (nsim_boot_connect(1, 2, addr, token, 5, &b, &err) != NSIM_OK)
        _exit(1);
    if (mode == 1) {
        nsim_boot_close(b);
        _exit(0);
    }
    uint32_t mine = 111, all[2];
    double mx = 3.5, sum = 2;
    if (nsim_boot_allgather(b, &mine, 4, all, &err) != NSIM_OK ||
        nsim_boot_sync(b, &mx, &sum, &err) != NSIM_OK)
        _exit(1);
    nsim_boot_close(b);
    _exit(all[0] == 7 && all[1] == 111 && mx == 9 && sum == 3 ? 0 : 2);
}

static int wait_child(pid_t pid)
{
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static void test_good_token(void)
{
    nsim_err err = {0};
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port_base());
    pid_t pid = fork();
    if (pid == 0)
        child(addr, "s3cret", 0);
    nsim_boot *b = NULL;
    NSIM_ASSERT_OK(nsim_boot_connect(0, 2, addr, "s3cret", 5, &b, &err));
    uint32_t mine = 7, all[2];
    double mx = 9, sum = 1;
    NSIM_ASSERT_OK(nsim_boot_allgather(b, &mine, 4, all, &err));
    NSIM_ASSERT_OK(nsim_boot_sync(b, &mx, &sum, &err));
    CU_ASSERT_EQUAL(all[1], 111);
    CU_ASSERT_EQUAL(mx, 9);
    CU_ASSERT_EQUAL(sum, 3);
    nsim_boot_close(b);
    CU_ASSERT_EQUAL(wait_child(pid), 0);
}

static void test_wrong_token(void)
{
    nsim_err err = {0};
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port_base() + 1);
    pid_t pid = fork();
    if (pid == 0)
        child(addr, "not-the-token", 0);
    nsim_boot *b = NULL;
    double t0 = now_s();
    CU_ASSERT_NOT_EQUAL(nsim_boot_connect(0, 2, addr, "s3cret", 5, &b, &err),
                        NSIM_OK);
    CU_ASSERT(now_s() - t0 < 4.5);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "wrong token"));
    CU_ASSERT_PTR_NULL(b);
    CU_ASSERT_EQUAL(wait_child(pid), 1); /* the peer was refused too */
}

static void test_peer_never_connects(void)
{
    nsim_err err = {0};
    char addr[64];
    nsim_boot *b = NULL;
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port_base() + 2);
    double t0 = now_s();
    CU_ASSERT_NOT_EQUAL(nsim_boot_connect(0, 3, addr, "t", 1, &b, &err),
                        NSIM_OK);
    double dt = now_s() - t0;
    CU_ASSERT(dt >= 0.9 && dt < 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "rank(s) 1, 2 never connected"));
    /* and a client whose server never appears */
    t0 = now_s();
    CU_ASSERT_NOT_EQUAL(nsim_boot_connect(1, 2, addr, "t", 1, &b, &err),
                        NSIM_OK);
    CU_ASSERT(now_s() - t0 < 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot reach rank 0"));
}

static void test_lost_peer(void)
{
    nsim_err err = {0};
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port_base() + 3);
    pid_t pid = fork();
    if (pid == 0)
        child(addr, "s3cret", 1);
    nsim_boot *b = NULL;
    NSIM_ASSERT_OK(nsim_boot_connect(0, 2, addr, "s3cret", 5, &b, &err));
    CU_ASSERT_EQUAL(wait_child(pid), 0);
    double mx = 0, sum = 0, t0 = now_s();
    CU_ASSERT_NOT_EQUAL(nsim_boot_sync(b, &mx, &sum, &err), NSIM_OK);
    CU_ASSERT(now_s() - t0 < 4.5);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "lost peer: rank 1"));
    nsim_boot_close(b);
}

CU_TestInfo nsim_test_bootstrap[] = {
    {"SHA-256 and HMAC vectors", test_vectors},
    {"good token: all-gather and barrier", test_good_token},
    {"wrong token refused", test_wrong_token},
    {"peer never connects: bounded", test_peer_never_connects},
    {"peer lost mid-run", test_lost_peer},
    CU_TEST_INFO_NULL,
};
