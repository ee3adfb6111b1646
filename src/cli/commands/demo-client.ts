/** The demo client's redirect URIs without --redirect-uri: the Zapier CLI's and a local one (its help names them). */
export const DEFAULT_REDIRECT_URIS = ['https://zapier.com/dashboard/auth/oauth/return/App000CLIAPI/', 'http://localhost:8765/callback'];
