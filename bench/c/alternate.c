/* alternate - time two commands run in turn, so drift on a shared machine (a busy disk, another
 * tenant) falls on both alike. Usage: alternate RUNS WARMUP CMD_A... -- CMD_B...
 * Each round runs A then B, or B then A on odd rounds (neither always goes first), each with
 * posix_spawn and waitpid, stdout to /dev/null. Prints one line per round: "<ns of A> <ns of B>".
 * Exits 1 if a command fails, naming it and its status. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* run - one spawn and wait of argv; its wall time in ns, or exit on failure */
static int64_t run(char **argv, posix_spawn_file_actions_t *fa) {
	pid_t pid;
	int64_t t0 = now_ns();
	int rc = posix_spawn(&pid, argv[0], fa, NULL, argv, environ);
	if (rc != 0) { fprintf(stderr, "alternate: cannot run %s: %s\n", argv[0], strerror(rc)); exit(1); }
	int status;
	if (waitpid(pid, &status, 0) != pid) { perror("alternate: waitpid"); exit(1); }
	int64_t t1 = now_ns();
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "alternate: %s failed (status %d)\n", argv[0], status);
		exit(1);
	}
	return t1 - t0;
}

int main(int argc, char **argv) {
	if (argc < 6) { fprintf(stderr, "usage: alternate RUNS WARMUP CMD_A... -- CMD_B...\n"); return 64; }
	long runs = strtol(argv[1], NULL, 10), warmup = strtol(argv[2], NULL, 10);
	char **a = argv + 3, **b = NULL;
	for (int i = 3; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) { argv[i] = NULL; b = argv + i + 1; break; }
	if (runs < 1 || warmup < 0 || b == NULL || *a == NULL || *b == NULL) {
		fprintf(stderr, "usage: alternate RUNS WARMUP CMD_A... -- CMD_B...\n");
		return 64;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (long i = 0; i < warmup; i++) { run(a, &fa); run(b, &fa); }
	for (long i = 0; i < runs; i++) {
		int64_t ta, tb;
		if (i % 2 == 0) { ta = run(a, &fa); tb = run(b, &fa); }
		else { tb = run(b, &fa); ta = run(a, &fa); }
		printf("%lld %lld\n", (long long)ta, (long long)tb);
	}
	return 0;
}
