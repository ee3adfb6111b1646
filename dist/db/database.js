import { startEmbeddedPostgres } from './embedded-postgres.js';
export async function openDatabase(config, log = () => { }) {
    if (config.databaseUrl)
        return { url: config.databaseUrl, owned: false, stop: async () => { } };
    return startEmbeddedPostgres(config.dataDir, log);
}
//# sourceMappingURL=database.js.map