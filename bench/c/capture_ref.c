/* capture_ref - the C reference for outl-capture's speed: the same syscalls, nothing else.
 * Usage: capture_ref INBOX TEXT. Checks INBOX/tmp exists (creating it like mkdir -p), opens an
 * O_EXCL temp in it, writes the JSON, fsyncs, renames to INBOX/<ULID>.json, fsyncs INBOX. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/* ulid - 48-bit ms time + 80 random bits in 26 Crockford base32 characters */
static void ulid(char out[27]) {
	struct timespec ts;
	unsigned char b[16];
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	for (int i = 0; i < 6; i++) b[i] = (unsigned char)(ms >> (40 - 8 * i));
	if (getrandom(b + 6, 10, 0) != 10) exit(74);
	/* 128 bits -> 26 chars, 5 bits at a time from the low end (130 bits, top 2 zero) */
	unsigned __int128 v = 0;
	for (int i = 0; i < 16; i++) v = v << 8 | b[i];
	for (int i = 25; i >= 0; i--) { out[i] = alphabet[v & 31]; v >>= 5; }
	out[26] = 0;
}

/* mkdirs - mkdir -p with mode 0700 */
static int mkdirs(const char *path) {
	struct stat st;
	if (lstat(path, &st) == 0) return S_ISDIR(st.st_mode) ? 0 : -1;
	char *copy = strdup(path), *slash = strrchr(copy, '/');
	if (slash && slash != copy) { *slash = 0; if (mkdirs(copy) != 0) { free(copy); return -1; } }
	free(copy);
	return (mkdir(path, 0700) == 0 || errno == EEXIST) ? 0 : -1;
}

int main(int argc, char **argv) {
	if (argc != 3) { fprintf(stderr, "usage: capture_ref INBOX TEXT\n"); return 64; }
	char tmpdir[4096], tmp[8192], final[8192], id[27], body[8192];
	snprintf(tmpdir, sizeof tmpdir, "%s/tmp", argv[1]);
	if (mkdirs(tmpdir) != 0) return 73;
	ulid(id);
	snprintf(tmp, sizeof tmp, "%s/%s.%d.tmp", tmpdir, id, (int)getpid());
	snprintf(final, sizeof final, "%s/%s.json", argv[1], id);
	/* the benchmark text needs no escaping; the time is fixed-width like outl-capture's */
	int n = snprintf(body, sizeof body,
	    "{\"text\":\"%s\",\"captured_at\":\"2026-12-02T10:00:00.000Z\",\"source\":\"cli\"}\n", argv[2]);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) return 74;
	if (write(fd, body, (size_t)n) != n || fsync(fd) != 0) { close(fd); unlink(tmp); return 74; }
	close(fd);
	if (rename(tmp, final) != 0) { unlink(tmp); return 74; }
	int dfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) != 0) { unlink(final); return 74; }
	close(dfd);
	printf("%s\n", id);
	return 0;
}
