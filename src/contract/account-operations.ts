// The operations on accounts: users, publishers, their members and invitations, and tokens.
import * as z from 'zod';
import { op } from './operation.js';
import {
  AddMemberBody,
  Invitation,
  CreatePublisherBody,
  CreateTokenBody,
  CreateUserBody,
  CreatedToken,
  CreatedUser,
  Me,
  Publisher,
  PublisherMember,
  TokenList,
} from './resources.js';

export const getMe = op({
  id: 'getMe',
  method: 'GET',
  path: '/users/me',
  summary: 'Who the token belongs to',
  auth: 'user',
  response: Me,
});
export const createUser = op({
  id: 'createUser',
  method: 'POST',
  path: '/users',
  summary: 'Create a user and its first token (admin only)',
  auth: 'user',
  body: CreateUserBody,
  status: 201,
  response: CreatedUser,
});
export const listUserTokens = op({
  id: 'listUserTokens',
  method: 'GET',
  path: '/users/me/tokens',
  summary: 'Your own user tokens',
  auth: 'user',
  response: TokenList,
});
export const createUserToken = op({
  id: 'createUserToken',
  method: 'POST',
  path: '/users/me/tokens',
  summary: 'Create a user token for yourself',
  auth: 'user',
  body: CreateTokenBody,
  status: 201,
  response: CreatedToken,
});
export const deleteUserToken = op({
  id: 'deleteUserToken',
  method: 'DELETE',
  path: '/users/me/tokens/{tokenId}',
  summary: 'Revoke one of your user tokens',
  auth: 'user',
  status: 204,
});
export const createPublisher = op({
  id: 'createPublisher',
  method: 'POST',
  path: '/publishers',
  summary: 'Create a publisher; you become its owner',
  auth: 'user',
  body: CreatePublisherBody,
  status: 201,
  response: Publisher,
});
export const listPublisherTokens = op({
  id: 'listPublisherTokens',
  method: 'GET',
  path: '/publishers/{publisherId}/tokens',
  summary: "A publisher's personal access tokens (owner only)",
  auth: 'user',
  response: TokenList,
});
export const createPublisherToken = op({
  id: 'createPublisherToken',
  method: 'POST',
  path: '/publishers/{publisherId}/tokens',
  summary: 'Create a personal access token for a publisher (owner only)',
  auth: 'user',
  body: CreateTokenBody,
  status: 201,
  response: CreatedToken,
});
export const deletePublisherToken = op({
  id: 'deletePublisherToken',
  method: 'DELETE',
  path: '/publishers/{publisherId}/tokens/{tokenId}',
  summary: 'Revoke a personal access token (owner only)',
  auth: 'user',
  status: 204,
});
export const addPublisherMember = op({
  id: 'addPublisherMember',
  method: 'POST',
  path: '/publishers/{publisherId}/members',
  summary:
    "Invite a user (by id, e-mail or user name) to a publisher; they join when they accept. A member's role changes at once (owner only)",
  auth: 'user',
  body: AddMemberBody,
  status: 201,
  response: Invitation,
});
export const removePublisherMember = op({
  id: 'removePublisherMember',
  method: 'DELETE',
  path: '/publishers/{publisherId}/members/{userId}',
  summary:
    "Remove a member, revoking the publisher's tokens they created, or withdraw their invitation (owner only; never the last owner)",
  auth: 'user',
  status: 204,
});
export const listPublisherInvitations = op({
  id: 'listPublisherInvitations',
  method: 'GET',
  path: '/publishers/{publisherId}/invitations',
  summary: "A publisher's pending invitations (owner only)",
  auth: 'user',
  response: z.array(Invitation),
});
export const listMyInvitations = op({
  id: 'listMyInvitations',
  method: 'GET',
  path: '/users/me/invitations',
  summary: 'Your pending invitations to join publishers',
  auth: 'user',
  response: z.array(Invitation),
});
export const acceptInvitation = op({
  id: 'acceptInvitation',
  method: 'POST',
  path: '/users/me/invitations/{publisherId}/accept',
  summary: 'Accept your invitation to a publisher: you become a member',
  auth: 'user',
  response: PublisherMember,
});
export const declineInvitation = op({
  id: 'declineInvitation',
  method: 'DELETE',
  path: '/users/me/invitations/{publisherId}',
  summary: 'Decline your invitation to a publisher',
  auth: 'user',
  status: 204,
});

/** Every account operation, in the order the OpenAPI document lists them. */
export const accountOperations = [
  getMe,
  createUser,
  listUserTokens,
  createUserToken,
  deleteUserToken,
  createPublisher,
  listPublisherTokens,
  createPublisherToken,
  deletePublisherToken,
  addPublisherMember,
  removePublisherMember,
  listPublisherInvitations,
  listMyInvitations,
  acceptInvitation,
  declineInvitation,
];
