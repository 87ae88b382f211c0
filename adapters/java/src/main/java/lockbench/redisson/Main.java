package lockbench.redisson;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/**
 * lockbench's Redisson adapter: speaks the external-lock protocol v1
 * (docs/external-locks.md) over stdin and stdout. One JVM serves every
 * lockbench client of a scenario: requests go to Redisson's async API and
 * replies are written by one writer thread as their futures complete, in
 * any order.
 */
public final class Main {
    private Main() {
    }

    /** One writer thread: lines are queued and written whole, flushed when the queue runs dry. */
    static final class Out implements Runnable {
        private final LinkedBlockingQueue<String> q = new LinkedBlockingQueue<>();
        private final OutputStream os;
        private final Thread t;

        Out(OutputStream os) {
            this.os = os;
            this.t = new Thread(this, "stdout");
            t.setDaemon(true);
            t.start();
        }

        void line(String s) {
            q.add(s);
        }

        @Override
        public void run() {
            List<String> batch = new ArrayList<>();
            try {
                while (true) {
                    batch.add(q.take());
                    q.drainTo(batch);
                    StringBuilder b = new StringBuilder();
                    for (String s : batch) {
                        b.append(s).append('\n');
                    }
                    batch.clear();
                    os.write(b.toString().getBytes(StandardCharsets.UTF_8));
                    if (q.isEmpty()) {
                        os.flush();
                    }
                }
            } catch (InterruptedException | IOException e) {
                // stdout closed or shutting down: lockbench no longer reads
            }
        }

        /** Waits up to ms for the queued lines to be written. */
        void drain(long ms) {
            long end = System.currentTimeMillis() + ms;
            while (!q.isEmpty() && System.currentTimeMillis() < end) {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
            try {
                Thread.sleep(5);
                os.flush();
            } catch (InterruptedException | IOException e) {
                // nothing more to do
            }
        }
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        Out out = new Out(System.out);
        String first = in.readLine();
        if (first == null) {
            return;
        }
        Adapter a;
        try {
            Object h = Json.parse(first);
            if (!(h instanceof Map)) {
                throw new IllegalArgumentException("hello is not a JSON object");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> hello = (Map<String, Object>) h;
            if (!"hello".equals(hello.get("op"))) {
                throw new IllegalArgumentException("the first message is not hello");
            }
            if (!Long.valueOf(1).equals(hello.get("v"))) {
                throw new IllegalArgumentException("protocol version " + hello.get("v") + " is not 1");
            }
            a = new Adapter(hello, out, version(), "java " + System.getProperty("java.version"));
        } catch (Exception e) {
            StringBuilder b = new StringBuilder("{\"op\":\"hello\",\"v\":1,\"error\":");
            Json.quote(b, String.valueOf(rootCause(e).getMessage())).append('}');
            out.line(b.toString());
            out.drain(2000);
            System.exit(1);
            return;
        }
        out.line(a.helloReply());
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            a.handle(line);
        }
        // stdin closed: the scenario is over. Replies still owed are not waited for.
        out.drain(1000);
        Thread stop = new Thread(a::shutdown, "shutdown");
        stop.setDaemon(true);
        stop.start();
        stop.join(2000);
        out.drain(200);
        Runtime.getRuntime().halt(0);
    }

    /** Redisson's version, from its jar's manifest (Bundle-Version, as org.redisson.Version logs it). */
    static String version() {
        try {
            URL u = org.redisson.Version.class.getProtectionDomain().getCodeSource().getLocation();
            try (JarFile j = new JarFile(new java.io.File(u.toURI()))) {
                Manifest m = j.getManifest();
                String v = m.getMainAttributes().getValue("Bundle-Version");
                if (v == null) {
                    v = m.getMainAttributes().getValue("Implementation-Version");
                }
                if (v != null) {
                    return v;
                }
            }
        } catch (Exception e) {
            // fall through
        }
        return "unknown";
    }

    static Throwable rootCause(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
