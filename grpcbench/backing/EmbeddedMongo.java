// The embedded MongoDB of grpcbench: mongo-java-server's in-memory backend on
// 127.0.0.1 and a free port (argument 0) or the given one. Prints "READY {"port": N}"
// when it listens, and stops when its stdin closes (grpcbench stopped or died)
// or on SIGTERM. Run as a single-file program: java -cp 'lib/*' EmbeddedMongo.java 0
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

public class EmbeddedMongo {
    public static void main(String[] args) throws Exception {
        MongoServer server = new MongoServer(new MemoryBackend());
        server.bind("127.0.0.1", Integer.parseInt(args.length > 0 ? args[0] : "0"));
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
        System.out.println("READY {\"port\": " + server.getLocalAddress().getPort() + "}");
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for end of input
        }
        server.shutdownNow();
    }
}
