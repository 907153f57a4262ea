/* SPDX-License-Identifier: MIT
 *
 * test_fileio.c - input reading and output writing: non-regular inputs
 * refused without blocking, an output that is an input refused, symlinks
 * followed, devices written in place, ENOSPC reported, several outputs
 * all-or-none, temporary files removed by SIGTERM, duplicate JSON keys.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nsim_test.h"
#include "sim/core/fileio.h"
#include "sim/core/jread.h"

static char dir[256];

static const char *in_dir(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/nsim-fileio-XXXXXX");
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* Files in dir, so a leftover temporary file is seen. */
static int count_files(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    if (d != NULL)
        closedir(d);
    return n;
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            unlink(in_dir(e->d_name));
    if (d != NULL)
        closedir(d);
    rmdir(dir);
}

static void test_read_refuses_odd_files(void)
{
    nsim_err err = {0};
    char *text = NULL;
    size_t len = 0;
    make_dir();
    CU_ASSERT_EQUAL(nsim_read_file(dir, &text, &len, &err), NSIM_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a regular file (a directory)"));
    CU_ASSERT_EQUAL(nsim_read_file("/dev/zero", &text, &len, &err), NSIM_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "character device"));
    /* a FIFO with no writer: refused at once, never blocks */
    CU_ASSERT_EQUAL_FATAL(mkfifo(in_dir("fifo"), 0600), 0);
    CU_ASSERT_EQUAL(nsim_read_file(in_dir("fifo"), &text, &len, &err),
                    NSIM_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "a FIFO"));
    put(in_dir("ok.json"), "{\"a\": 1}");
    NSIM_ASSERT_OK(nsim_read_file(in_dir("ok.json"), &text, &len, &err));
    CU_ASSERT_EQUAL(len, 8);
    CU_ASSERT_STRING_EQUAL(text, "{\"a\": 1}");
    free(text);
    nsim_inputs_reset();
    remove_dir();
}

static void test_output_that_is_an_input(void)
{
    nsim_err err = {0};
    char *text = NULL;
    size_t len = 0;
    make_dir();
    put(in_dir("scenario.json"), "{}");
    CU_ASSERT_EQUAL_FATAL(symlink("scenario.json", in_dir("alias.json")), 0);
    NSIM_ASSERT_OK(nsim_read_file(in_dir("scenario.json"), &text, &len, &err));
    free(text);
    /* by its own name and through a link: refused, both named */
    CU_ASSERT_EQUAL(nsim_write_file_atomic(in_dir("scenario.json"), "x", 1,
                                           &err), NSIM_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "refusing to overwrite an input"));
    CU_ASSERT_EQUAL(nsim_write_file_atomic(in_dir("alias.json"), "x", 1, &err),
                    NSIM_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "alias.json"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "scenario.json"));
    NSIM_ASSERT_OK(nsim_read_file(in_dir("scenario.json"), &text, &len, &err));
    CU_ASSERT_STRING_EQUAL(text, "{}");
    free(text);
    nsim_inputs_reset();
    remove_dir();
}

static void test_symlink_and_devices(void)
{
    nsim_err err = {0};
    struct stat st;
    make_dir();
    /* a link (even a dangling one) is written through, and stays a link */
    CU_ASSERT_EQUAL_FATAL(symlink("target.json", in_dir("link.json")), 0);
    NSIM_ASSERT_OK(nsim_write_file_atomic(in_dir("link.json"), "one", 3, &err));
    NSIM_ASSERT_OK(nsim_write_file_atomic(in_dir("link.json"), "two", 3, &err));
    CU_ASSERT_EQUAL(lstat(in_dir("link.json"), &st), 0);
    CU_ASSERT(S_ISLNK(st.st_mode));
    CU_ASSERT_EQUAL(stat(in_dir("target.json"), &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 3);
    CU_ASSERT_EQUAL(count_files(), 2);
    /* a device is written in place: /dev/null stays a device */
    NSIM_ASSERT_OK(nsim_write_file_atomic("/dev/null", "x", 1, &err));
    CU_ASSERT_EQUAL(stat("/dev/null", &st), 0);
    CU_ASSERT(S_ISCHR(st.st_mode));
    /* a full disk is an error, not a silent success */
    CU_ASSERT_EQUAL(nsim_write_file_atomic("/dev/full", "x", 1, &err),
                    NSIM_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "No space left on device"));
    /* a directory is not an output */
    CU_ASSERT_EQUAL(nsim_write_file_atomic(dir, "x", 1, &err), NSIM_EINVAL);
    remove_dir();
}

static void test_outputs_all_or_none(void)
{
    nsim_err err = {0};
    struct stat st;
    make_dir();
    put(in_dir("old.json"), "old");
    nsim_out_begin();
    NSIM_ASSERT_OK(nsim_write_file_atomic(in_dir("old.json"), "new!", 4, &err));
    NSIM_ASSERT_OK(nsim_write_file_atomic(in_dir("b.csv"), "b", 1, &err));
    /* staged: nothing has changed yet */
    CU_ASSERT_EQUAL(stat(in_dir("b.csv"), &st), -1);
    CU_ASSERT_EQUAL(stat(in_dir("old.json"), &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 3);
    /* the same file twice in one command */
    CU_ASSERT_EQUAL(nsim_write_file_atomic(in_dir("b.csv"), "c", 1, &err),
                    NSIM_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "also the output"));
    /* a failing one: the command aborts, nothing is left */
    CU_ASSERT_NOT_EQUAL(nsim_write_file_atomic(in_dir("no/such/x.csv"), "x",
                                               1, &err), NSIM_OK);
    nsim_out_abort();
    CU_ASSERT_EQUAL(stat(in_dir("b.csv"), &st), -1);
    CU_ASSERT_EQUAL(stat(in_dir("old.json"), &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 3);
    CU_ASSERT_EQUAL(count_files(), 1);
    /* commit: both land; a failing in-place output fails the commit and
     * leaves none */
    nsim_out_begin();
    NSIM_ASSERT_OK(nsim_write_file_atomic(in_dir("old.json"), "new!", 4, &err));
    NSIM_ASSERT_OK(nsim_write_file_atomic(in_dir("b.csv"), "b", 1, &err));
    NSIM_ASSERT_OK(nsim_out_commit(&err));
    CU_ASSERT_EQUAL(stat(in_dir("old.json"), &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 4);
    CU_ASSERT_EQUAL(count_files(), 2);
    nsim_out_begin();
    NSIM_ASSERT_OK(nsim_write_file_atomic(in_dir("c.json"), "c", 1, &err));
    NSIM_ASSERT_OK(nsim_write_file_atomic("/dev/full", "x", 1, &err));
    CU_ASSERT_EQUAL(nsim_out_commit(&err), NSIM_EIO);
    CU_ASSERT_EQUAL(stat(in_dir("c.json"), &st), -1);
    CU_ASSERT_EQUAL(count_files(), 2);
    remove_dir();
}

static void test_signals_remove_temps(void)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGPIPE, SIGHUP};
    for (int k = 0; k < 4; k++) {
        make_dir();
        fflush(NULL);
        pid_t pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
            nsim_err err = {0};
            signal(sigs[k], SIG_DFL); /* as a shell leaves it */
            nsim_out_install_signals();
            nsim_out_begin();
            if (nsim_write_file_atomic(in_dir("out.json"), "partial", 7,
                                       &err) != NSIM_OK ||
                count_files() != 1) /* the temporary file */
                _exit(3);
            raise(sigs[k]);
            _exit(4);
        }
        int status = 0;
        CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
        CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == sigs[k]);
        CU_ASSERT_EQUAL(count_files(), 0);
        remove_dir();
    }
}

static void test_duplicate_keys(void)
{
    nsim_err err = {0};
    cJSON *root = NULL;
    const char *top = "{\"a\": 1, \"b\": 2, \"a\": 3}";
    CU_ASSERT_EQUAL(nsim_json_parse(top, strlen(top), "t.json", &root, &err),
                    NSIM_ECONFIG);
    CU_ASSERT_STRING_EQUAL(err.msg, "t.json: a: duplicate key (given twice "
                                    "in one object)");
    const char *deep = "{\"devices\": [{\"id\": \"g0\"}, {\"id\": \"g1\", "
                       "\"gen\": \"h100\", \"id\": \"g2\"}]}";
    CU_ASSERT_EQUAL(nsim_json_parse(deep, strlen(deep), "t.json", &root, &err),
                    NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.json: devices[1].id: duplicate"));
    const char *ok = "{\"a\": {\"x\": 1}, \"b\": {\"x\": 2}}";
    NSIM_ASSERT_OK(nsim_json_parse(ok, strlen(ok), "t.json", &root, &err));
    cJSON_Delete(root);
}

CU_TestInfo nsim_test_fileio[] = {
    {"inputs: directory, FIFO, device refused without reading",
     test_read_refuses_odd_files},
    {"an output that is an input (or a link to one) is refused",
     test_output_that_is_an_input},
    {"symlinks followed, devices in place, ENOSPC, directories",
     test_symlink_and_devices},
    {"several outputs: staged, all or none", test_outputs_all_or_none},
    {"SIGTERM, SIGINT, SIGPIPE, SIGHUP remove the temporary files",
     test_signals_remove_temps},
    {"duplicate JSON keys refused with their path", test_duplicate_keys},
    CU_TEST_INFO_NULL,
};
