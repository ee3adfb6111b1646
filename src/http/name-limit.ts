/** The longest name of an organization, user, agent or OAuth client (a CHECK in SQL too). */
export const NAME_MAX_LENGTH = 200;
