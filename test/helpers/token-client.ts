// Requests as one x-user-token holder, through app.inject().
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export interface TokenClient {
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  patch(url: string, payload: unknown): Promise<LightMyRequestResponse>;
  delete(url: string): Promise<LightMyRequestResponse>;
}

export function asUser(app: FastifyInstance, token: string): TokenClient {
  const headers = { 'x-user-token': token };
  return {
    get: (url) => app.inject({ method: 'GET', url, headers }),
    post: (url, payload) => app.inject({ method: 'POST', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) }),
    patch: (url, payload) => app.inject({ method: 'PATCH', url, headers, payload: payload as object }),
    delete: (url) => app.inject({ method: 'DELETE', url, headers }),
  };
}
