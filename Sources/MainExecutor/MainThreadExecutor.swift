// MainThreadExecutor: runs all of outld's async work (its loop and the Workspace actor, a default
// actor, which follows a task's executor preference) on the thread that calls `run()`; bench/merge.sh
// runs `outl debug-merge` on it too, so it times what outld does.
// Why: Swift's default executor on Linux is libdispatch's thread pool, and the first pool thread
// arms libdispatch's workqueue monitor, a 1-second timer that wakes the process forever. With
// this executor no pool thread starts, so an idle outld makes no wake-ups beyond the watchdog.
#if canImport(Glibc)
import Glibc
#endif

public final class MainThreadExecutor: TaskExecutor, @unchecked Sendable {
    private var jobs: [UnownedJob] = []
    private var finished = false
    private var mutex = pthread_mutex_t()
    private var wake = pthread_cond_t()

    public init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&wake, nil)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let j = UnownedJob(job)
        pthread_mutex_lock(&mutex)
        jobs.append(j)
        pthread_cond_signal(&wake)
        pthread_mutex_unlock(&mutex)
    }

    /// Lets `run()` return once the jobs queued so far have run.
    public func finish() {
        pthread_mutex_lock(&mutex)
        finished = true
        pthread_cond_signal(&wake)
        pthread_mutex_unlock(&mutex)
    }

    /// Runs jobs on the calling thread until `finish()`; sleeps (no timeout) when there are none.
    public func run() {
        while true {
            pthread_mutex_lock(&mutex)
            while jobs.isEmpty && !finished { pthread_cond_wait(&wake, &mutex) }
            if jobs.isEmpty && finished { pthread_mutex_unlock(&mutex); return }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            pthread_mutex_unlock(&mutex)
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
